import { countTokens } from 'gpt-tokenizer';
import type { CompletionRequest } from '../providers/model-provider';

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

/** What a call has streamed so far, counted a delta at a time so no text is kept. */
export class StreamedTokenTally {
  private tokens = 0;

  add(delta: string): void {
    if (delta.length > 0) this.tokens += countTokens(delta);
  }

  get completionTokens(): number {
    return this.tokens;
  }
}
