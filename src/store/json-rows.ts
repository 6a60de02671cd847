/** A timestamp of a row PostgreSQL returned as JSON (`to_jsonb`, `json_agg`), where it is text. */
export function dateFromJson(text: string | null): Date | null {
  return text === null ? null : new Date(text);
}
