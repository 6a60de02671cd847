import type { CompletionPlan, Delta } from './plan-reply';

/** What every chunk of one completion repeats. */
export interface CompletionMeta {
  id: string;
  created: number;
  model: string;
  /** `stream_options.include_usage`: OpenAI then sends `usage: null` on each chunk and the figures in a last one. */
  includeUsage: boolean;
}

export interface Usage {
  prompt_tokens: number;
  completion_tokens: number;
  total_tokens: number;
}

type ChunkDelta = Delta | { role: 'assistant'; content: string } | Record<string, never>;

export function usageOf(promptTokens: number, completionTokens: number): Usage {
  return { prompt_tokens: promptTokens, completion_tokens: completionTokens, total_tokens: promptTokens + completionTokens };
}

/** A `chat.completion.chunk` with one choice. */
export function chunkObject(meta: CompletionMeta, delta: ChunkDelta, finishReason: string | null = null) {
  return {
    id: meta.id,
    object: 'chat.completion.chunk',
    created: meta.created,
    model: meta.model,
    choices: [{ index: 0, delta, finish_reason: finishReason, logprobs: null }],
    ...(meta.includeUsage ? { usage: null } : {}),
  };
}

/** The last chunk when usage is asked for: no choices, only the figures. */
export function usageChunk(meta: CompletionMeta, usage: Usage) {
  return { id: meta.id, object: 'chat.completion.chunk', created: meta.created, model: meta.model, choices: [], usage };
}

/** The non-streaming answer: the plan's chunks folded into one message. */
export function completionObject(meta: CompletionMeta, plan: CompletionPlan, finishReason: string | null, usage: Usage) {
  const deltas = [...plan.chunks].map((chunk) => chunk.delta);
  const text = deltas.map((delta) => ('content' in delta ? delta.content : '')).join('');
  const reasoning = deltas.map((delta) => ('reasoning_content' in delta ? delta.reasoning_content : '')).join('');
  const toolCalls = plan.calls.map((call) => ({
    ...(plan.omitIds ? {} : { id: call.id }),
    type: 'function' as const,
    function: { name: call.name, arguments: call.arguments },
  }));
  return {
    id: meta.id,
    object: 'chat.completion',
    created: meta.created,
    model: meta.model,
    choices: [
      {
        index: 0,
        message: {
          role: 'assistant',
          // OpenAI sends null content beside tool calls when there is no text.
          content: text === '' && toolCalls.length > 0 ? null : text,
          refusal: null,
          ...(reasoning ? { reasoning_content: reasoning } : {}),
          ...(toolCalls.length > 0 ? { tool_calls: toolCalls } : {}),
        },
        finish_reason: finishReason,
        logprobs: null,
      },
    ],
    usage,
  };
}

/** One server-sent event carrying JSON. */
export function sseEvent(data: unknown): string {
  return `data: ${JSON.stringify(data)}\n\n`;
}

export const SSE_DONE = 'data: [DONE]\n\n';
