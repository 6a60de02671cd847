import OpenAI from 'openai';
import { now } from './clock';
import { SCENARIO_HEADER, type Scenario } from './scenario';

/** Timestamps of one completion streamed straight from the model with the `openai` SDK. */
export interface DirectTiming {
  startedAt: number;
  /** The first chunk with text (the role-only opening chunk does not count, as in Switchyard). */
  firstTokenAt?: number;
  lastTokenAt?: number;
  endedAt: number;
  textChars: number;
  contentChunks: number;
}

/** The client the baselines share; configured as Switchyard's provider configures its own. */
export function createDirectClient(baseURL: string): OpenAI {
  return new OpenAI({ baseURL, apiKey: 'none', maxRetries: 0 });
}

/**
 * Streams one scripted answer; timestamps are taken as each parsed chunk reaches our loop.
 * `messages` is what the request sends (default: one short user message); `onText` is told
 * the length of each piece of text as it is parsed.
 */
export async function streamDirect(
  client: OpenAI,
  scenario: Scenario,
  messages: OpenAI.ChatCompletionMessageParam[] = [{ role: 'user', content: 'bench' }],
  onText?: (chars: number) => void,
): Promise<DirectTiming> {
  const startedAt = now();
  const stream = await client.chat.completions.create(
    { model: 'scripted', stream: true, stream_options: { include_usage: true }, messages },
    { headers: { [SCENARIO_HEADER]: JSON.stringify(scenario) } },
  );
  let firstTokenAt: number | undefined;
  let lastTokenAt: number | undefined;
  let textChars = 0;
  let contentChunks = 0;
  for await (const chunk of stream) {
    const content = chunk.choices[0]?.delta?.content;
    if (!content) continue;
    const at = now();
    firstTokenAt ??= at;
    lastTokenAt = at;
    textChars += content.length;
    onText?.(content.length);
    contentChunks++;
  }
  return {
    startedAt,
    ...(firstTokenAt !== undefined ? { firstTokenAt } : {}),
    ...(lastTokenAt !== undefined ? { lastTokenAt } : {}),
    endedAt: now(),
    textChars,
    contentChunks,
  };
}
