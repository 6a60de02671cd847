import type { UsageFigures, UsageLedgerRepository } from '../usage/store/usage-ledger-repository';
import { AppError } from '../errors/app-error';
import type { ConversationsRepository } from '../store/conversations-repository';
import type { MessagesRepository } from '../store/messages-repository';
import type { Turn, TurnsRepository } from '../store/turns-repository';
import type { TurnService } from '../turns/turn-service';
import { chatModelSettings, chatResponseFormat, type CreateChatCompletionRequest } from './chat-completion-request';
import { chatCompletionObject, type ChatCompletionObject } from './chat-completion-object';
import { planChatTurn, turnToolChoice } from './chat-messages';
import { functionToolsError, splitFunctionTools, type UsableTools } from './function-tools';

export interface ChatCompletionsServiceDeps {
  conversations: Pick<ConversationsRepository, 'create'>;
  messages: Pick<MessagesRepository, 'listTurnAnswer'>;
  /** A completion's usage: its turn's sum in the usage ledger. */
  ledger: Pick<UsageLedgerRepository, 'forTurn'>;
  turns: Pick<TurnsRepository, 'get'>;
  turnService: Pick<TurnService, 'create'>;
  usableTools(userId: string): Promise<UsableTools>;
}

/** Chat Completions on turns: each call is one turn of a new conversation (docs/API.md, "OpenAI-compatible routes"). */
export class ChatCompletionsService {
  constructor(private readonly deps: ChatCompletionsServiceDeps) {}

  /**
   * 1. The functions split by the one rule (function-tools.ts); Chat Completions keeps no state
   *    between calls, so a request takes Switchyard's tools or the caller's functions, not both.
   * 2. The messages as the turn's input, whole (stateless, as OpenAI's).
   * 3. A new conversation of the user's, and its turn with the request's settings.
   */
  async create(userId: string, request: CreateChatCompletionRequest, keyId?: string): Promise<{ turn: Turn; callerFunctions: Set<string> }> {
    const tools = splitFunctionTools(
      (request.tools ?? []).map((tool) => tool.function),
      await this.deps.usableTools(userId),
    );
    if (!tools.ok) throw functionToolsError(tools);
    if (tools.serverTools.length > 0 && tools.functions.length > 0) {
      const message = `names Switchyard's tools (${tools.serverTools.join(', ')}) and declares functions of its own (${tools.functions.map((fn) => fn.name).join(', ')}); Chat Completions keeps no state between calls, so a request takes one kind or the other (Responses takes both)`;
      throw new AppError('unsupported_parameter', `unsupported parameter: tools: ${message}`, [{ field: 'tools', message }]);
    }
    const plan = planChatTurn(request.messages);
    if (!plan.ok) {
      const field = plan.index < 0 ? 'messages' : `messages[${plan.index}]`;
      throw new AppError('invalid_request', `invalid request: ${field}: ${plan.message}`, [{ field, message: plan.message }]);
    }
    const modelSettings = chatModelSettings(request);
    const responseFormat = chatResponseFormat(request.response_format);
    const conversation = await this.deps.conversations.create({
      userId,
      title: 'OpenAI chat completion',
      metadata: { openai: 'chat.completions' },
      openaiRetained: true,
      source: 'chat.completions',
    });
    const { turn } = await this.deps.turnService.create(userId, conversation.id, {
      content: plan.content,
      onBusy: 'reject',
      ...(keyId ? { keyId } : {}),
      options: {
        model: request.model,
        tools: tools.serverTools,
        ...(tools.functions.length > 0 ? { functions: tools.functions } : {}),
        ...(request.tool_choice !== undefined ? { toolChoice: turnToolChoice(request.tool_choice) } : {}),
        ...(plan.system !== undefined ? { instructions: plan.system } : {}),
        ...(modelSettings ? { modelSettings } : {}),
        ...(responseFormat ? { responseFormat } : {}),
      },
    });
    return { turn, callerFunctions: new Set(tools.functions.map((fn) => fn.name)) };
  }

  /** A completion's usage: its turn's sum in the ledger, the same figure a `chat.completion` carries. */
  usage(turnId: string): Promise<UsageFigures> {
    return this.deps.ledger.forTurn(turnId);
  }

  /** The ended turn as a `chat.completion`. */
  async completion(turnId: string, model: string, created: number): Promise<{ turn: Turn; completion: ChatCompletionObject }> {
    const turn = await this.deps.turns.get(turnId);
    if (!turn) throw new AppError('internal', `the turn ${turnId} of a chat completion is gone`);
    const [messages, usage] = await Promise.all([this.deps.messages.listTurnAnswer(turnId), this.deps.ledger.forTurn(turnId)]);
    return { turn, completion: chatCompletionObject({ turn, messages, model, created, usage }) };
  }
}
