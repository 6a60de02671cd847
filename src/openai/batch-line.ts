import { z } from 'zod';
import { fieldIssues } from '../errors/zod-issues';
import { findToolExchangeFault } from '../providers/tool-exchange-fault';
import type { BatchItemSpec, BatchMessage } from '../store/batch-item';
import { splitFunctionTools, type UsableTools } from './function-tools';
import { chatModelSettings, chatResponseFormat, createChatCompletionSchema, unsupportedChatParameter } from './chat-completion-request';
import { planChatTurn, turnToolChoice } from './chat-messages';
import { createResponseSchema, hasTurnInput, planResponseTurn } from './response-request';
import { responseModelSettings, responseTextFormat, unsupportedResponseParameter } from './response-settings';

/** The endpoints an OpenAI batch runs (its `endpoint`, its lines' `url`). */
export const OPENAI_BATCH_ENDPOINTS = ['/v1/chat/completions', '/v1/responses'] as const;
export type OpenAiEndpoint = (typeof OPENAI_BATCH_ENDPOINTS)[number];

/**
 * A `/v1/chat/completions` body as the route takes it, not streamed: its settings and
 * `response_format` are the item's, what Switchyard cannot honour refuses the line.
 */
const chatCompletionBody = createChatCompletionSchema.extend({ stream: z.literal(false).nullable().optional(), stream_options: z.null().optional() });

/**
 * A `/v1/responses` body: a Responses request that stands alone, as a batch line must (no
 * conversation to continue, nothing to stream or to run in the background of).
 */
const responseBody = createResponseSchema.omit({ previous_response_id: true, conversation: true, background: true, stream: true }).extend({
  background: z.literal(false).nullable().optional(),
  stream: z.literal(false).nullable().optional(),
});

/** A line of OpenAI's Batch API input file; its `body` is read by its `url`'s schema. */
const openAiBatchLine = z.object({ custom_id: z.string().min(1).max(200), method: z.literal('POST'), url: z.enum(OPENAI_BATCH_ENDPOINTS), body: z.unknown() }).strict();
const BODY_SCHEMAS = { '/v1/chat/completions': chatCompletionBody, '/v1/responses': responseBody } as const;

/** An item value in OpenAI's shape: what tells it from a Switchyard item (which has neither field). */
export function isOpenAiBatchLine(value: unknown): boolean {
  return typeof value === 'object' && value !== null && 'custom_id' in value && 'body' in value;
}

export type OpenAiLineOutcome =
  | { ok: true; customId: string; spec: BatchItemSpec }
  /** `code`: OpenAI's, for the batch's `errors.data` (default `invalid_request`). */
  | { ok: false; problems: { field?: string; message: string; code?: string }[] };

/**
 * One line of an OpenAI Batch API file as a Switchyard batch item, pure: its system and developer
 * messages (a Responses body's `instructions` too) are the item's `system`; the rest is the one
 * turn that answers the request (a single user message as it is, earlier messages and tool
 * answers as chat messages); its functions are split between Switchyard's tools and the
 * caller's as every OpenAI route splits them (function-tools.ts): a step that calls one of the
 * caller's ends the item with the calls in its result, as OpenAI does. `endpoint`: the batch's,
 * which every line's `url` must be, as OpenAI requires.
 */
export function openAiLineToItem(value: unknown, usableTools: UsableTools, endpoint?: OpenAiEndpoint): OpenAiLineOutcome {
  const declared = typeof value === 'object' && value !== null ? (value as { url?: unknown; body?: unknown }) : {};
  const unsupported = (declared.url === '/v1/responses' ? unsupportedResponseParameter : unsupportedChatParameter)(declared.body);
  if (unsupported) return { ok: false, problems: [{ field: `body.${unsupported.param}`, message: unsupported.message, code: 'unsupported_parameter' }] };
  const envelope = openAiBatchLine.safeParse(value);
  // The body is read as its url says, else as the batch's endpoint's: a line's every problem is named at once.
  const url = envelope.success ? envelope.data.url : (endpoint ?? '/v1/chat/completions');
  const body = BODY_SCHEMAS[url].safeParse((value as { body?: unknown }).body);
  if (!envelope.success || !body.success) {
    const issues = [...(envelope.success ? [] : envelope.error.issues), ...(body.success ? [] : body.error.issues.map((issue) => ({ ...issue, path: ['body', ...issue.path] })))];
    return { ok: false, problems: fieldIssues(issues).map((issue) => ({ ...(issue.field ? { field: issue.field } : {}), message: issue.message })) };
  }
  const customId = envelope.data.custom_id;
  if (endpoint && url !== endpoint) return { ok: false, problems: [{ field: 'url', message: `the batch's endpoint is ${endpoint}: every line's url must be it` }] };
  if (url === '/v1/responses') return responseLineToItem(customId, body.data as z.infer<typeof responseBody>, usableTools);
  return chatLineToItem(customId, body.data as z.infer<typeof chatCompletionBody>, usableTools);
}

/** A `/v1/chat/completions` line's body as an item. */
function chatLineToItem(customId: string, body: z.infer<typeof chatCompletionBody>, usableTools: UsableTools): OpenAiLineOutcome {
  const plan = planChatTurn(body.messages);
  if (!plan.ok) return { ok: false, problems: [{ field: plan.index < 0 ? 'body.messages' : `body.messages[${plan.index}]`, message: plan.message }] };
  const tools = splitFunctionTools(
    (body.tools ?? []).map((tool) => tool.function),
    usableTools,
  );
  if (!tools.ok) return { ok: false, problems: [{ field: 'body.tools', message: tools.message, code: tools.code }] };
  const { serverTools, functions } = tools;
  const choice = body.tool_choice;
  const modelSettings = chatModelSettings(body);
  const responseFormat = chatResponseFormat(body.response_format);
  return {
    ok: true,
    customId,
    spec: {
      messages: [asBatchMessage(plan.content)],
      ...(plan.system !== undefined ? { system: plan.system } : {}),
      model: body.model,
      tools: serverTools,
      ...(functions.length > 0 ? { functions } : {}),
      ...(choice !== undefined ? { toolChoice: turnToolChoice(choice) } : {}),
      ...(modelSettings ? { modelSettings } : {}),
      ...(responseFormat ? { responseFormat } : {}),
    },
  };
}

/** A `/v1/responses` line's body as an item, by the rules `POST /openai/v1/responses` has (responses-service.ts). */
function responseLineToItem(customId: string, body: z.infer<typeof responseBody>, usableTools: UsableTools): OpenAiLineOutcome {
  const plan = planResponseTurn(body);
  if (!hasTurnInput(plan)) return { ok: false, problems: [{ field: 'body.input', message: 'gives no message to answer (only system or developer messages)' }] };
  const fault = findToolExchangeFault(plan.messages);
  if (fault) {
    const message =
      fault.kind === 'unanswered'
        ? `no tool output found for function call ${fault.callIds.join(', ')}`
        : `no function call found for function_call_output with call_id ${fault.callId}`;
    return { ok: false, problems: [{ field: 'body.input', message }] };
  }
  const tools = splitFunctionTools(body.tools ?? [], usableTools);
  if (!tools.ok) return { ok: false, problems: [{ field: 'body.tools', message: tools.message, code: tools.code }] };
  const modelSettings = responseModelSettings(body);
  const responseFormat = responseTextFormat(body);
  return {
    ok: true,
    customId,
    spec: {
      messages: [asBatchMessage(plan.content)],
      ...(plan.instructions !== undefined ? { system: plan.instructions } : {}),
      ...(modelSettings ? { modelSettings } : {}),
      ...(responseFormat ? { responseFormat } : {}),
      ...(body.model !== undefined ? { model: body.model } : {}),
      tools: tools.serverTools,
      ...(tools.functions.length > 0 ? { functions: tools.functions } : {}),
      ...(plan.toolChoice !== undefined ? { toolChoice: plan.toolChoice } : {}),
    },
  };
}

function asBatchMessage(content: ReturnType<typeof planResponseTurn>['content']): BatchMessage {
  return typeof content === 'string' || Array.isArray(content) ? content : { role: 'user', content };
}
