import type { BatchItemRecord, BatchItemResult } from '../store/batches-repository';
import type { OpenAiEndpoint } from './batch-line';
import { itemIds, outputText, type OutputItem } from './response-items';
import type { ResponseObject } from './response-object';
import { chatCompletionId } from './chat-completion-id';
import { chatFinishReason } from './chat-completion-object';

/** What an OpenAI output or error line needs of the batch besides the item. */
export interface OutputContext {
  batchId: string;
  /** The batch's endpoint: what the output lines' bodies are. */
  endpoint: OpenAiEndpoint;
  /** Seconds since the epoch: the `created` of every chat.completion. */
  created: number;
  /** The model a line's request named none of (LLM_MODEL). */
  defaultModel: string;
}

/**
 * An ended item's line of an OpenAI batch's output file (it succeeded) or error file (it failed,
 * or was cancelled): OpenAI's line shapes, the output's `body` a `chat.completion` of the item's
 * last step (or, for `/v1/responses`, a response object of it) with `usage` totals of all
 * steps, plus `switchyard: {conversationId, turnId, toolCalls}`. Pure.
 */
export function outputLine(item: BatchItemRecord, context: OutputContext): Record<string, unknown> {
  const id = `batch_req_${context.batchId.replace(/^batch_/, '').replace(/-/g, '')}_${item.position}`;
  const customId = item.customId ?? String(item.position);
  const result = item.result;
  if (item.status !== 'succeeded' || !result) {
    const error = result?.error ?? { code: item.status, message: `the item ${item.status}` };
    return { id, custom_id: customId, response: null, error: { code: error.code === 'cancelled' ? 'batch_cancelled' : error.code, message: error.message } };
  }
  const turnId = result.turnId ?? null;
  const switchyard = { conversationId: item.conversationId, turnId, toolCalls: result.toolCalls };
  const body = { ...(context.endpoint === '/v1/responses' ? responseBody(item, result, context, id) : chatCompletionBody(item, result, context, id)), switchyard };
  return { id, custom_id: customId, response: { status_code: 200, request_id: turnId, body }, error: null };
}

/** A `chat.completion` of the item's last step. */
function chatCompletionBody(item: BatchItemRecord, result: BatchItemResult, context: OutputContext, lineId: string): Record<string, unknown> {
  const callerCalls = result.callerToolCalls ?? [];
  return {
    id: chatCompletionId(result.turnId ?? lineId),
    object: 'chat.completion',
    created: context.created,
    model: item.spec.model ?? context.defaultModel,
    choices: [
      {
        index: 0,
        message: { role: 'assistant', content: result.text || null, refusal: null, ...(callerCalls.length > 0 ? { tool_calls: callerCalls } : {}) },
        finish_reason: chatFinishReason(result.finishReason ?? 'stop', callerCalls.length > 0),
        logprobs: null,
      },
    ],
    usage: { prompt_tokens: result.usage.promptTokens, completion_tokens: result.usage.completionTokens, total_tokens: result.usage.totalTokens },
  };
}

/**
 * A response object of the item's last step: its text as a `message` item, then the calls of
 * the caller's functions as `function_call` items (the response ends with them, as a response
 * does). The calls Switchyard ran are in `switchyard.toolCalls`: the result keeps no call ids.
 */
function responseBody(item: BatchItemRecord, result: BatchItemResult, context: OutputContext, lineId: string): ResponseObject {
  const key = (result.turnId ?? lineId).replace(/^turn_/, '').replace(/-/g, '');
  const output: OutputItem[] = [];
  if (result.text) output.push({ type: 'message', id: result.messageId ?? `msg_${key}`, status: 'completed', role: 'assistant', content: [outputText(result.text)] });
  for (const call of result.callerToolCalls ?? [])
    output.push({ type: 'function_call', id: itemIds.functionCall(call.id), call_id: call.id, name: call.function.name, arguments: call.function.arguments, status: 'completed' });
  const incomplete = result.finishReason === 'length';
  return {
    id: `resp_${key}`,
    object: 'response',
    created_at: context.created,
    status: incomplete ? 'incomplete' : 'completed',
    background: false,
    completed_at: incomplete ? null : context.created,
    conversation: null,
    error: null,
    incomplete_details: incomplete ? { reason: 'max_output_tokens' } : null,
    instructions: item.spec.system ?? null,
    max_output_tokens: null,
    metadata: {},
    model: item.spec.model ?? context.defaultModel,
    output,
    output_text: result.text,
    parallel_tool_calls: true,
    previous_response_id: null,
    temperature: null,
    text: { format: { type: 'text' } },
    tool_choice: typeof item.spec.toolChoice === 'object' ? { type: 'function', name: item.spec.toolChoice.function.name } : (item.spec.toolChoice ?? 'auto'),
    tools: [],
    top_p: null,
    truncation: 'disabled',
    usage: {
      input_tokens: result.usage.promptTokens,
      input_tokens_details: { cached_tokens: 0 },
      output_tokens: result.usage.completionTokens,
      output_tokens_details: { reasoning_tokens: 0 },
      total_tokens: result.usage.totalTokens,
    },
  };
}

const MAX_CHUNK_BYTES = 1024 * 1024;

/** Lines as JSONL in chunks of at most about 1 MiB: a file written as its lines come. */
export async function* jsonlChunks(lines: AsyncIterable<Record<string, unknown>>): AsyncGenerator<Buffer> {
  let pending: string[] = [];
  let size = 0;
  for await (const line of lines) {
    const text = `${JSON.stringify(line)}\n`;
    pending.push(text);
    size += text.length;
    if (size >= MAX_CHUNK_BYTES) {
      yield Buffer.from(pending.join(''));
      pending = [];
      size = 0;
    }
  }
  if (pending.length > 0) yield Buffer.from(pending.join(''));
}
