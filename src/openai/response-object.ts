import type { UsageFigures } from '../usage/store/usage-ledger-repository';
import type { ResponseRecord } from './store/openai-responses-repository';
import type { StoredMessage } from '../store/messages-repository';
import type { Turn, TurnOptions } from '../store/turns-repository';
import type { ResponseFormat } from '../providers/response-format';
import { itemIds, outputText, type OutputItem } from './response-items';

/** `text.format` as OpenAI shows it back: the request's, flat. */
export type ResponseTextFormat =
  { type: 'text' } | { type: 'json_object' } | { type: 'json_schema'; name: string; schema: Record<string, unknown>; strict: boolean; description?: string };

export type ResponseStatus = 'queued' | 'in_progress' | 'completed' | 'failed' | 'cancelled' | 'incomplete';

/** The Responses API's response object (OpenAI's `Response`), as Switchyard answers it. */
export interface ResponseObject {
  id: string;
  object: 'response';
  created_at: number;
  status: ResponseStatus;
  background: boolean;
  completed_at: number | null;
  /** The conversation the request named, as OpenAI shows it; null for one of `previous_response_id` or none. */
  conversation: { id: string } | null;
  error: { code: string; message: string } | null;
  incomplete_details: { reason: string } | null;
  instructions: string | null;
  max_output_tokens: number | null;
  metadata: Record<string, string>;
  model: string;
  output: OutputItem[];
  output_text: string;
  parallel_tool_calls: boolean;
  previous_response_id: string | null;
  temperature: number | null;
  text: { format: ResponseTextFormat };
  tool_choice: unknown;
  tools: unknown[];
  top_p: number | null;
  truncation: 'disabled';
  usage: {
    input_tokens: number;
    input_tokens_details: { cached_tokens: number };
    output_tokens: number;
    output_tokens_details: { reasoning_tokens: number };
    total_tokens: number;
    /** From the usage ledger; a batch line's response has none (its item's usage is tokens only). */
    cost_usd?: number;
  } | null;
}

/**
 * A response as its turn stands: status, usage and error from the turn, and its output from the
 * turn's committed messages (a step's text, its calls, the outputs of the calls run here), in
 * the order a stream sends them. What a discarded attempt streamed is in no message; what a
 * cancelled step streamed is its `incomplete` message. Pure.
 */
export function responseObject(input: { record: ResponseRecord; turn: Turn; messages: StoredMessage[]; defaultModel: string; usage: UsageFigures }): ResponseObject {
  const { record, turn, usage } = input;
  const output: OutputItem[] = [];
  let step = 0;
  for (const message of input.messages) {
    if (message.turnId !== turn.id) continue;
    if (message.role === 'assistant') {
      step++;
      if (typeof message.content === 'string' && message.content !== '') {
        const status = message.incomplete ? 'incomplete' : 'completed';
        output.push({ type: 'message', id: itemIds.message(turn.id, step), status, role: 'assistant', content: [outputText(message.content)] });
      }
      for (const call of message.toolCalls ?? []) {
        output.push({
          type: 'function_call',
          id: itemIds.functionCall(call.id),
          call_id: call.id,
          name: call.function.name,
          arguments: call.function.arguments,
          status: 'completed',
        });
      }
    } else if (message.role === 'tool' && message.toolCallId) {
      output.push({
        type: 'function_call_output',
        id: itemIds.functionCallOutput(message.toolCallId),
        call_id: message.toolCallId,
        output: String(message.content),
        status: 'completed',
      });
    }
  }
  const status = responseStatus(turn);
  const ended = status !== 'queued' && status !== 'in_progress';
  return {
    ...responseShell(record, input.defaultModel, turn.options),
    status,
    completed_at: status === 'completed' && turn.finishedAt ? Math.floor(Date.parse(turn.finishedAt) / 1000) : null,
    error: turn.status === 'failed' ? { code: 'server_error', message: turn.error ? `${turn.error.code}: ${turn.error.message}` : 'the response failed' } : null,
    incomplete_details: status === 'incomplete' ? { reason: 'max_output_tokens' } : null,
    output,
    output_text: output.flatMap((item) => (item.type === 'message' ? item.content.map((part) => part.text) : [])).join(''),
    usage: ended
      ? {
          // The ledger's sum for the turn: what the provider billed, discarded attempts included.
          input_tokens: usage.promptTokens,
          input_tokens_details: { cached_tokens: usage.cachedPromptTokens },
          output_tokens: usage.completionTokens,
          output_tokens_details: { reasoning_tokens: usage.reasoningTokens },
          total_tokens: usage.totalTokens,
          cost_usd: usage.costUsd,
        }
      : null,
  };
}

/** A response before any of its output: what `response.created`, `.queued` and `.in_progress` carry. Pure. */
export function responseShell(record: ResponseRecord, defaultModel: string, options: TurnOptions = {}): Omit<ResponseObject, 'status'> {
  const { request } = record;
  const settings = options.modelSettings ?? {};
  return {
    id: record.id,
    object: 'response',
    created_at: Math.floor(record.createdAt.getTime() / 1000),
    background: request.background,
    completed_at: null,
    conversation: request.conversation ? { id: request.conversation } : null,
    error: null,
    incomplete_details: null,
    instructions: request.instructions,
    max_output_tokens: settings.max_tokens ?? null,
    metadata: request.metadata,
    model: request.model ?? options.model ?? defaultModel,
    output: [],
    output_text: '',
    parallel_tool_calls: settings.parallel_tool_calls ?? true,
    previous_response_id: record.previousResponseId,
    temperature: settings.temperature ?? null,
    text: { format: textFormat(options.responseFormat) },
    tool_choice: request.toolChoice,
    tools: request.tools,
    top_p: settings.top_p ?? null,
    truncation: 'disabled',
    usage: null,
  };
}

/** A turn's status as a response's. */
export function responseStatus(turn: Pick<Turn, 'status' | 'finishReason'>): ResponseStatus {
  switch (turn.status) {
    case 'queued':
      return 'queued';
    case 'running':
    case 'waiting_tools':
      return 'in_progress';
    case 'completed':
      return turn.finishReason === 'length' ? 'incomplete' : 'completed';
    case 'failed':
      return 'failed';
    case 'cancelled':
      return 'cancelled';
  }
}

function textFormat(format: ResponseFormat | undefined): ResponseTextFormat {
  if (!format) return { type: 'text' };
  if (format.type === 'json_object') return { type: 'json_object' };
  return {
    type: 'json_schema',
    name: format.name,
    schema: format.schema,
    strict: format.strict ?? false,
    ...(format.description !== undefined ? { description: format.description } : {}),
  };
}
