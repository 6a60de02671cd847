import type { BatchItemRecord } from '../store/batches-repository';
import { chatCompletionId } from './chat-completion-id';
import { chatFinishReason } from './chat-completion-object';

/** What an OpenAI output or error line needs of the batch besides the item. */
export interface OutputContext {
  batchId: string;
  /** Seconds since the epoch: the `created` of every chat.completion. */
  created: number;
  /** The model a line's request named none of (LLM_MODEL). */
  defaultModel: string;
}

/**
 * An ended item's line of an OpenAI batch's output file (it succeeded) or error file (it failed,
 * or was cancelled): OpenAI's line shapes, the output's `body` a `chat.completion` of the item's
 * last step with `usage` totals of all steps, plus `switchyard: {conversationId, turnId,
 * toolCalls}`. Pure.
 */
export function outputLine(item: BatchItemRecord, context: OutputContext): Record<string, unknown> {
  const id = `batch_req_${context.batchId.replace(/^batch_/, '').replace(/-/g, '')}_${item.position}`;
  const customId = item.customId ?? String(item.position);
  const result = item.result;
  if (item.status !== 'succeeded' || !result) {
    const error = result?.error ?? { code: item.status, message: `the item ${item.status}` };
    return { id, custom_id: customId, response: null, error: { code: error.code === 'cancelled' ? 'batch_cancelled' : error.code, message: error.message } };
  }
  const callerCalls = result.callerToolCalls ?? [];
  const turnId = result.turnId ?? null;
  const body = {
    id: chatCompletionId(turnId ?? id),
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
    switchyard: { conversationId: item.conversationId, turnId, toolCalls: result.toolCalls },
  };
  return { id, custom_id: customId, response: { status_code: 200, request_id: turnId, body }, error: null };
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
