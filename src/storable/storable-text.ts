/**
 * What PostgreSQL refuses in text it stores: the NUL character (in `text` and in `jsonb`) and
 * lone UTF-16 surrogates (in `jsonb`). Requests carrying them are refused at the API; text that
 * arrives from elsewhere (a model's stream, a tool's answer) is made storable instead, since
 * refusing it would fail the turn over a character. Pure.
 */

const NUL = /\u0000/g;
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;
const LONE_SURROGATES = new RegExp(LONE_SURROGATE.source, 'g');

/** Why PostgreSQL would refuse this text, or null when it would store it. */
export function unstorableTextProblem(text: string): string | null {
  if (text.includes('\u0000')) return 'must not contain the NUL character (\\u0000)';
  if (LONE_SURROGATE.test(text)) return 'must be well-formed Unicode (no lone surrogate)';
  return null;
}

/** The text with NULs and lone surrogates replaced by U+FFFD (the replacement character). */
export function toStorableText(text: string): string {
  if (unstorableTextProblem(text) === null) return text;
  return text.replace(NUL, '\uFFFD').replace(LONE_SURROGATES, '\uFFFD');
}

/** A JSON value with every string (keys included) made storable; returns the value itself when nothing needed it. */
export function toStorableJson(value: unknown): unknown {
  if (typeof value === 'string') return toStorableText(value);
  if (Array.isArray(value)) return value.map(toStorableJson);
  if (typeof value !== 'object' || value === null) return value;
  return Object.fromEntries(Object.entries(value).map(([key, child]) => [toStorableText(key), toStorableJson(child)]));
}
