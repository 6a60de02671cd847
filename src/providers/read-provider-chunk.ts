import { z } from 'zod';
import type { Usage } from '../events/event';
import type { ProviderChunk } from './model-provider';
import { toStorableText } from '../storable/storable-text';
import { ProviderError } from './provider-error';

/**
 * The parts of a chunk we rely on; anything else a provider adds passes through unread. An
 * `error` field is not among them: the stream reader throws on a chunk whose `error` is set
 * before it gets here, and a provider that sends `"error": null` on every chunk is not failing.
 */
/** Model output is stored as it arrives: a NUL or lone surrogate becomes U+FFFD here, for clients and the database alike. */
const outputText = z.string().transform(toStorableText);

const chunkSchema = z.object({
  choices: z
    .array(
      z.object({
        delta: z
          .object({
            content: outputText.nullish(),
            reasoning_content: outputText.nullish(),
            reasoning: outputText.nullish(),
            tool_calls: z
              .array(
                z.object({
                  index: z.number().int().nonnegative(),
                  id: outputText.nullish(),
                  function: z.object({ name: outputText.nullish(), arguments: outputText.nullish() }).nullish(),
                }),
              )
              .nullish(),
          })
          .nullish(),
        finish_reason: z.string().nullish(),
      }),
    )
    .nullish(),
  usage: z.object({ prompt_tokens: z.number().nullish(), completion_tokens: z.number().nullish(), total_tokens: z.number().nullish() }).nullish(),
});

/** What one streamed chunk carries: its output in order, and the finish reason or usage if it has them. */
export interface ReadChunk {
  output: ProviderChunk[];
  finishReason?: string;
  usage?: Usage;
}

/** Normalises one chat-completion chunk. Pure; a chunk of the wrong shape is a `stream_error`. */
export function readProviderChunk(raw: unknown): ReadChunk {
  const parsed = chunkSchema.safeParse(raw);
  if (!parsed.success) throw new ProviderError('stream_error', `malformed chunk from provider: ${parsed.error.message}`);
  const chunk = parsed.data;
  const read: ReadChunk = { output: [] };
  if (chunk.usage) {
    const promptTokens = chunk.usage.prompt_tokens ?? 0;
    const completionTokens = chunk.usage.completion_tokens ?? 0;
    read.usage = { promptTokens, completionTokens, totalTokens: chunk.usage.total_tokens ?? promptTokens + completionTokens };
  }
  const choice = chunk.choices?.[0];
  if (!choice) return read;
  const delta = choice.delta;
  const reasoning = delta?.reasoning_content ?? delta?.reasoning;
  if (reasoning) read.output.push({ type: 'reasoning', delta: reasoning });
  if (delta?.content) read.output.push({ type: 'text', delta: delta.content });
  for (const call of delta?.tool_calls ?? []) {
    read.output.push({
      type: 'tool-call-fragment',
      index: call.index,
      ...(call.id ? { id: call.id } : {}),
      ...(call.function?.name ? { name: call.function.name } : {}),
      ...(call.function?.arguments ? { argumentsDelta: call.function.arguments } : {}),
    });
  }
  if (choice.finish_reason) read.finishReason = choice.finish_reason;
  return read;
}
