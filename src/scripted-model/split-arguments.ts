export interface SplitOptions {
  /** Characters per piece. */
  every: number;
  /** Explicit character offsets to split at; win over `every`. Offsets outside the text are ignored. */
  at?: readonly number[] | undefined;
}

/**
 * Splits tool-call arguments into the pieces a provider would stream. Offsets count UTF-16
 * code units, so a split may fall inside a string, an escape or a surrogate pair, as it does
 * with real providers. The pieces join back to `text`; empty text gives no pieces.
 */
export function splitArguments(text: string, options: SplitOptions): string[] {
  if (text === '') return [];
  const offsets = options.at
    ? [...new Set(options.at)].filter((offset) => offset > 0 && offset < text.length).sort((a, b) => a - b)
    : Array.from({ length: Math.ceil(text.length / options.every) - 1 }, (_, i) => (i + 1) * options.every);
  const bounds = [0, ...offsets, text.length];
  return bounds.slice(1).map((end, i) => text.slice(bounds[i], end));
}
