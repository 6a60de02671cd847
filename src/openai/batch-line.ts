import { z } from 'zod';
import { fieldIssues } from '../errors/zod-issues';
import type { BatchItemSpec } from '../store/batch-item';
import { splitFunctionTools, type UsableTools } from './function-tools';
import { chatModelSettings, chatResponseFormat, createChatCompletionSchema, unsupportedChatParameter } from './chat-completion-request';
import { planChatTurn, turnToolChoice } from './chat-messages';

/**
 * A `/v1/chat/completions` body as the route takes it, not streamed: its settings and
 * `response_format` are the item's, what Switchyard cannot honour refuses the line.
 */
const chatCompletionBody = createChatCompletionSchema.extend({ stream: z.literal(false).nullable().optional(), stream_options: z.null().optional() });

/** A line of OpenAI's Batch API input file. */
const openAiBatchLine = z
  .object({
    custom_id: z.string().min(1).max(200),
    method: z.literal('POST'),
    url: z.literal('/v1/chat/completions'),
    body: chatCompletionBody,
  })
  .strict();

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
 * messages are the item's `system`; the rest is the one turn that answers the request (a single
 * user message as it is, earlier messages and tool answers as chat messages); its functions are
 * split between Switchyard's tools and the caller's as every OpenAI route splits them
 * (function-tools.ts): a step that calls one of the caller's ends the item with the calls in its
 * result, as OpenAI does.
 */
export function openAiLineToItem(value: unknown, usableTools: UsableTools): OpenAiLineOutcome {
  const unsupported = typeof value === 'object' && value !== null ? unsupportedChatParameter((value as { body?: unknown }).body) : undefined;
  if (unsupported) return { ok: false, problems: [{ field: `body.${unsupported.param}`, message: unsupported.message, code: 'unsupported_parameter' }] };
  const parsed = openAiBatchLine.safeParse(value);
  if (!parsed.success)
    return { ok: false, problems: fieldIssues(parsed.error.issues).map((issue) => ({ ...(issue.field ? { field: issue.field } : {}), message: issue.message })) };
  const { custom_id: customId, body } = parsed.data;
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
      messages: [typeof plan.content === 'string' || Array.isArray(plan.content) ? plan.content : { role: 'user', content: plan.content }],
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
