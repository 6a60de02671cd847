import type { SwitchyardEvent } from '../events/event';
import { chatFinishReason } from './chat-completion-object';

/** One `chat.completion.chunk`. */
export type ChatChunk = Record<string, unknown> & { object: 'chat.completion.chunk' };

export interface ChatChunkMapper {
  /** The chunk every stream starts with: the assistant's role. */
  start(): ChatChunk;
  /**
   * The chunks of one of the turn's events, in seq order; `ended` once the turn ended, `error`
   * when it failed (the stream then ends with OpenAI's error data, not `[DONE]`).
   */
  map(event: SwitchyardEvent): { chunks: ChatChunk[]; ended: boolean; error?: { code: string; message: string } };
}

/**
 * Maps one turn's events to Chat Completions' stream (docs/API.md, "OpenAI-compatible routes"),
 * pure: text as `delta.content`; the calls of the caller's functions (`callerFunctions`) as
 * `delta.tool_calls` numbered within their step, the calls Switchyard runs itself not at all;
 * the turn's end as a chunk with `finish_reason`, and with `includeUsage` one more with the
 * totals of all steps and no choices, as OpenAI sends it. Chat Completions has no way to take
 * back what was sent: a discarded attempt's text stays with its reader.
 */
export function createChatChunkMapper(input: { id: string; created: number; model: string; includeUsage: boolean; callerFunctions: ReadonlySet<string> }): ChatChunkMapper {
  const base = { id: input.id, object: 'chat.completion.chunk' as const, created: input.created, model: input.model, system_fingerprint: null };
  const chunk = (delta: Record<string, unknown>, finishReason: string | null = null): ChatChunk => ({
    ...base,
    choices: [{ index: 0, delta, finish_reason: finishReason, logprobs: null }],
    ...(input.includeUsage ? { usage: null } : {}),
  });
  /** The caller's calls of the current step, by id: their index in `tool_calls`. */
  let calls = new Map<string, number>();
  let callerCalled = false;
  return {
    start: () => chunk({ role: 'assistant', content: '', refusal: null }),
    map(event) {
      switch (event.type) {
        case 'step-start':
        case 'attempt-discarded':
          calls = new Map();
          return { chunks: [], ended: false };
        case 'text-delta':
          return { chunks: event.delta === '' ? [] : [chunk({ content: event.delta })], ended: false };
        case 'tool-call-start': {
          if (!input.callerFunctions.has(event.toolName)) return { chunks: [], ended: false };
          const index = calls.size;
          calls.set(event.toolCallId, index);
          callerCalled = true;
          return { chunks: [chunk({ tool_calls: [{ index, id: event.toolCallId, type: 'function', function: { name: event.toolName, arguments: '' } }] })], ended: false };
        }
        case 'tool-call-delta': {
          const index = calls.get(event.toolCallId);
          if (index === undefined || event.argsTextDelta === '') return { chunks: [], ended: false };
          return { chunks: [chunk({ tool_calls: [{ index, function: { arguments: event.argsTextDelta } }] })], ended: false };
        }
        case 'turn-finish': {
          const chunks = [chunk({}, chatFinishReason(event.finishReason, callerCalled && event.finishReason === 'tool_calls'))];
          if (input.includeUsage) {
            const { promptTokens, completionTokens, totalTokens } = event.usage;
            chunks.push({ ...base, choices: [], usage: { prompt_tokens: promptTokens, completion_tokens: completionTokens, total_tokens: totalTokens } });
          }
          return { chunks, ended: true };
        }
        case 'turn-cancelled':
          return { chunks: [chunk({}, 'stop')], ended: true };
        case 'turn-error':
          return { chunks: [], ended: true, error: event.error };
        default:
          return { chunks: [], ended: false };
      }
    },
  };
}
