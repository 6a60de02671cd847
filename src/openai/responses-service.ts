import type { UsageLedgerRepository } from '../usage/store/usage-ledger-repository';
import { randomUUID } from 'node:crypto';
import { AppError, notFound } from '../errors/app-error';
import type { ConversationsRepository } from '../store/conversations-repository';
import type { Queryable } from '../store/db';
import type { MessagesRepository } from '../store/messages-repository';
import type { OpenAiResponsesRepository, ResponseRecord } from './store/openai-responses-repository';
import { isTerminal, type Turn, type TurnsRepository } from '../store/turns-repository';
import { findToolExchangeFault, type ExchangeMessage } from '../providers/tool-exchange-fault';
import { buildMessages } from '../turns/build-messages';
import type { TurnService } from '../turns/turn-service';
import type { AgentReferences } from '../agents/agent-references';
import { functionToolsError, splitFunctionTools, type UsableTools } from './function-tools';
import { hasTurnInput, planResponseTurn, type CreateResponseRequest } from './response-request';
import { responseObject, type ResponseObject } from './response-object';
import { inputItems, itemPage } from './conversation-items';
import { responseModelSettings, responseTextFormat } from './response-settings';

export interface ResponsesServiceDeps {
  conversations: Pick<ConversationsRepository, 'create' | 'get' | 'setCompaction'>;
  messages: Pick<MessagesRepository, 'listTurnAnswer' | 'listLastStepOutline' | 'findTurnInput'>;
  turns: Pick<TurnsRepository, 'get' | 'hasLaterTurn'>;
  responses: Pick<OpenAiResponsesRepository, 'insert' | 'get' | 'delete'>;
  turnService: Pick<TurnService, 'create' | 'cancel'>;
  /** The tools this user may use: functions named so, declaring no parameters, run here. */
  usableTools(userId: string): Promise<UsableTools>;
  latestSeq(conversationId: string): Promise<number>;
  /** LLM_MODEL: the model a response names when its request named none. */
  defaultModel: string;
  /** A response's usage: its turn's sum in the usage ledger. */
  ledger: Pick<UsageLedgerRepository, 'forTurn'>;
  /** A `prompt`'s agent: the user's, not archived (404 otherwise). */
  agentReferences: Pick<AgentReferences, 'resolve'>;
}

/** The Responses API on turns: a response is one turn of a conversation (docs/API.md, "OpenAI-compatible routes"). */
export class ResponsesService {
  constructor(private readonly deps: ResponsesServiceDeps) {}

  /**
   * 1. The request as a turn (its input, tools and instructions); a function it names after a
   *    Switchyard tool that cannot run here is refused (function-tools.ts).
   * 2. With `previous_response_id`: that response's conversation, once its turn has ended, when
   *    it is the conversation's latest turn.
   * 3. With `conversation`: that conversation of the user's, appended to (a turn still active
   *    on it is a 409, as on `/v1`).
   * 4. Otherwise a new conversation.
   * Either way the input must pair every function call with its output, as OpenAI checks: each
   * call of the caller's functions the previous response ended with, and each `function_call`
   * given in the input, is answered right after it, and each `function_call_output` answers
   * one of them. An input that does not would be stored, and every later request of the
   * conversation would fail at the provider.
   * 5. The turn, keyed by the response's id, then the response that names it.
   */
  async create(userId: string, request: CreateResponseRequest, keyId?: string): Promise<{ record: ResponseRecord; turn: Turn }> {
    const tools = splitFunctionTools(request.tools ?? [], await this.deps.usableTools(userId));
    if (!tools.ok) throw functionToolsError(tools);
    const plan = planResponseTurn(request);
    if (!hasTurnInput(plan)) throw invalid('input', 'gives no message to answer (only system or developer messages)');
    const joinedId = typeof request.conversation === 'string' ? request.conversation : request.conversation?.id;
    if (joinedId && request.previous_response_id) throw invalid('conversation', 'give previous_response_id or conversation, not both');
    const joined = joinedId ? await this.deps.conversations.get(userId, joinedId) : null;
    if (joinedId && !joined) throw notFound('conversation');
    const { prompt } = request;
    const agent = prompt ? await this.deps.agentReferences.resolve(userId, prompt.version == null ? prompt.id : `${prompt.id}@${prompt.version}`, 'prompt') : undefined;
    const previous = request.previous_response_id ? await this.previous(userId, request.previous_response_id) : null;
    // The history before the last step was checked when it was stored: that step and the input are what can pair wrongly.
    const before: ExchangeMessage[] = previous
      ? buildMessages(null, await this.deps.messages.listTurnAnswer(previous.turnId))
      : joined
        ? await this.deps.messages.listLastStepOutline(joined.id)
        : [];
    const unpaired = unpairedCall(before, plan.messages);
    if (unpaired) throw invalid('input', unpaired);
    const [management] = request.context_management ?? [];
    // compact_threshold is OpenAI's token count at which to compact: Switchyard's triggerTokens.
    const compaction = management ? { triggerTokens: management.compact_threshold } : undefined;
    const existingId = previous?.conversationId ?? joined?.id;
    if (existingId && compaction) await this.deps.conversations.setCompaction(existingId, compaction);
    const conversationId =
      existingId ??
      (
        await this.deps.conversations.create({
          userId,
          title: 'OpenAI response',
          metadata: { openai: 'responses' },
          openaiRetained: true,
          source: 'responses',
          ...(compaction ? { compaction } : {}),
        })
      ).id;
    // A conversation made here has no event yet: no need to ask the log.
    const afterSeq = previous || joined ? await this.deps.latestSeq(conversationId) : 0;
    const id = `resp_${randomUUID().replace(/-/g, '')}`;
    const modelSettings = responseModelSettings(request);
    const responseFormat = responseTextFormat(request);
    let record: ResponseRecord | undefined;
    // The response is recorded in the turn's transaction: a crash in between would leave a turn
    // that runs with no response to show it, and the client's retry would run another.
    const alongside = async (tx: Queryable, turn: Turn) => {
      record = await this.deps.responses.insert(
        {
          id,
          userId,
          conversationId,
          turnId: turn.id,
          previousResponseId: previous?.id ?? null,
          afterSeq,
          request: {
            model: request.model ?? null,
            instructions: plan.instructions ?? null,
            tools: request.tools ?? [],
            toolChoice: request.tool_choice ?? 'auto',
            metadata: request.metadata ?? {},
            background: request.background === true,
            conversation: joined?.id ?? null,
          },
        },
        tx,
      );
    };
    const { turn } = await this.deps.turnService.create(userId, conversationId, {
      content: plan.content,
      idempotencyKey: id,
      onBusy: 'reject',
      alongside,
      ...(keyId ? { keyId } : {}),
      ...(agent ? { agent } : {}),
      options: {
        ...(request.model !== undefined ? { model: request.model } : {}),
        // Without tools of its own, a response on an agent offers the agent's.
        ...(request.tools === undefined && agent ? {} : { tools: tools.serverTools }),
        ...(plan.toolChoice !== undefined ? { toolChoice: plan.toolChoice } : {}),
        ...(tools.functions.length > 0 ? { functions: tools.functions } : {}),
        ...(plan.instructions !== undefined ? { instructions: plan.instructions } : {}),
        ...(modelSettings ? { modelSettings } : {}),
        ...(responseFormat ? { responseFormat } : {}),
      },
    });
    // The id is new, so the turn is too: never a replay that would skip `alongside`.
    if (!record) throw new AppError('internal', "a response's turn was admitted without its record");
    return { record, turn };
  }

  /** The user's response and its turn; 404 for another user's or none. */
  async get(userId: string, id: string): Promise<{ record: ResponseRecord; turn: Turn }> {
    const record = await this.deps.responses.get(userId, id);
    const turn = record ? await this.deps.turns.get(record.turnId) : null;
    if (!record || !turn) throw notFound('response');
    return { record, turn };
  }

  /** The response as its turn stands now. */
  async object(record: ResponseRecord, turn?: Turn): Promise<ResponseObject> {
    const current = turn ?? (await this.deps.turns.get(record.turnId));
    if (!current) throw notFound('response');
    const [messages, usage] = await Promise.all([this.deps.messages.listTurnAnswer(current.id), this.deps.ledger.forTurn(current.id)]);
    return responseObject({ record, turn: current, messages, defaultModel: this.deps.defaultModel, usage });
  }

  /**
   * Deletes the response object (docs/API.md): 404 after, and its conversation stays. A response
   * still running is refused, as its stream and its end would have nothing to show.
   */
  async delete(userId: string, id: string): Promise<{ id: string; object: 'response'; deleted: true }> {
    const { turn } = await this.get(userId, id);
    if (!isTerminal(turn.status))
      throw new AppError('conversation_busy', `response ${id} is still ${turn.status === 'queued' ? 'queued' : 'in progress'}; cancel it or delete it once it has ended`, {
        activeTurnId: turn.id,
      });
    if (!(await this.deps.responses.delete(userId, id))) throw notFound('response');
    return { id, object: 'response', deleted: true };
  }

  /**
   * The items of the response's input (`GET /openai/v1/responses/:id/input_items`), a page of
   * them: what its request gave, as its turn stored it. Its system and developer messages went
   * to `instructions` and are not items.
   */
  async inputItems(userId: string, id: string, query: { after?: string | undefined; limit: number; order: 'asc' | 'desc' }): Promise<ReturnType<typeof itemPage>> {
    const { record } = await this.get(userId, id);
    const input = await this.deps.messages.findTurnInput(record.turnId);
    return itemPage(input ? inputItems(input.id, input.content) : [], query);
  }

  /** Cancels the response's turn (a finished one stays as it ended). */
  async cancel(userId: string, id: string): Promise<ResponseObject> {
    const { record } = await this.get(userId, id);
    const turn = await this.deps.turnService.cancel(userId, record.turnId);
    return this.object(record, turn);
  }

  private async previous(userId: string, id: string): Promise<ResponseRecord> {
    const record = await this.deps.responses.get(userId, id);
    const turn = record ? await this.deps.turns.get(record.turnId) : null;
    if (!record || !turn) throw invalid('previous_response_id', `response ${id} not found`);
    // Continuing an earlier response would append to the later turns too: its context is not OpenAI's branch.
    if (await this.deps.turns.hasLaterTurn(turn)) {
      throw new AppError('conflict', `response ${id} is not the latest response of its conversation; only the latest response of a conversation can be continued`, [
        { field: 'previous_response_id', message: 'not the latest response of its conversation' },
      ]);
    }
    if (!isTerminal(turn.status))
      throw new AppError('conversation_busy', `response ${id} is still ${turn.status === 'queued' ? 'queued' : 'in progress'}; continue from it once it has ended`, {
        activeTurnId: turn.id,
      });
    return record;
  }
}

/**
 * What pairs a function call wrongly when `input` follows `answer` (the previous response's
 * messages, or the conversation's last step), naming the `call_id` as OpenAI's refusals do; undefined when providers accept it.
 */
function unpairedCall(answer: readonly ExchangeMessage[], input: readonly ExchangeMessage[]): string | undefined {
  const history = [...answer, ...input];
  const fault = findToolExchangeFault(history);
  switch (fault?.kind) {
    case undefined:
      return undefined;
    case 'unanswered':
      return `no tool output found for function call ${fault.callIds.join(', ')}`;
    case 'answered_twice':
      return `function call ${fault.callId} has more than one function_call_output`;
    case 'unexpected_answer': {
      const called = history.some((message) => message.role === 'assistant' && message.tool_calls?.some((call) => call.id === fault.callId));
      return called
        ? `the function_call_output with call_id ${fault.callId} does not follow its function_call: give each output right after the calls it answers (first in the input, for the previous response's calls)`
        : `no function call found for function_call_output with call_id ${fault.callId}`;
    }
  }
}

function invalid(field: string, message: string): AppError {
  return new AppError('invalid_request', `invalid request: ${field}: ${message}`, [{ field, message }]);
}
