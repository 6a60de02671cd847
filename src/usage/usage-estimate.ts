import type { CompletionRequest } from '../providers/model-provider';

let loadedCountTokens: ((text: string) => number) | undefined;

/**
 * Loads the o200k tokenizer. Building its rank tables takes a process a good part of a second
 * of CPU, which one that never estimates (an API process, most test files) should not pay, and
 * which a worker pays before it takes a job (runtime/start-worker.ts): loaded at a stream's first
 * token instead, it would hold that stream up long enough to merge its first deltas.
 */
export function loadTokenizer(): (text: string) => number {
  loadedCountTokens ??= (require('gpt-tokenizer') as typeof import('gpt-tokenizer')).countTokens;
  return loadedCountTokens;
}

function countTokens(text: string): number {
  return loadTokenizer()(text);
}

/**
 * The tokens of a call whose usage never arrived (a stream cut, a worker that died), counted
 * with the o200k tokenizer from what was sent and what streamed back: the provider's own
 * tokenizer may differ, so these rows are marked `estimated`.
 */
export function estimatePromptTokens(request: Pick<CompletionRequest, 'messages' | 'tools'>): number {
  let tokens = 0;
  for (const message of request.messages) {
    // The chat format's few tokens of framing per message.
    tokens += 4 + countTokens(JSON.stringify(message));
  }
  if (request.tools && request.tools.length > 0) tokens += countTokens(JSON.stringify(request.tools));
  return tokens;
}

/**
 * What a call has streamed so far. The deltas since the last reading are kept and counted when
 * the count is read (the in-flight marker reads it at most once per throttle period), not one
 * tokenizer call per delta on the stream's path.
 */
export class StreamedTokenTally {
  private tokens = 0;
  private pending = '';

  add(delta: string): void {
    this.pending += delta;
  }

  get completionTokens(): number {
    if (this.pending.length > 0) {
      this.tokens += countTokens(this.pending);
      this.pending = '';
    }
    return this.tokens;
  }
}
