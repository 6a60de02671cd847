import type { SwitchyardEvent } from '../events/event';
import type { UsageFigures } from '../usage/store/usage-ledger-repository';
import { chatFinishReason, chatUsage } from './chat-completion-object';

/** One `chat.completion.chunk`. */
export type ChatChunk = Record<string, unknown> & { object: 'chat.completion.chunk' };

export interface ChatChunkMapper {
  /** The chunk every stream starts with: the assistant's role. */
  start(): ChatChunk;
  /**
   * The chunks of one of the turn's events, in seq order; `ended` once the turn ended, `error`
   * when it failed (the stream then ends with OpenAI's error data, not `[DONE]`); `usageDue`
   * when the stream asked for its usage and it is to be sent now, before `[DONE]`.
   */
  map(event: SwitchyardEvent): { chunks: ChatChunk[]; ended: boolean; usageDue?: true; error?: { code: string; message: string } };
  /** The usage chunk: the ledger's sum for the turn, with no choices, as OpenAI sends it. */
  usage(figures: UsageFigures): ChatChunk;
}

/**
 * Maps one turn's events to Chat Completions' stream (docs/API.md, "OpenAI-compatible routes"),
 * pure: text as `delta.content`; the calls of the caller's functions (`callerFunctions`) as
 * `delta.tool_calls` numbered within their step, the calls Switchyard runs itself not at all;
 * the turn's end as a chunk with `finish_reason`, and with `includeUsage` one more with the
 * ledger's sum for the turn (read by the caller: the event's own usage has no cost) and no
 * choices, as OpenAI sends it. Chat Completions has no way to take
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
    usage: (figures) => ({ ...base, choices: [], usage: chatUsage(figures) }),
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
          return { chunks, ended: true, ...(input.includeUsage ? { usageDue: true as const } : {}) };
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
