/**
 * A Chat Completion's id is its turn's, so the turn is found with it (docs/API.md, "OpenAI-compatible routes"):
 * `chatcmpl-<the turn's uuid without dashes>`, as batch output lines write it too.
 */
export function chatCompletionId(turnId: string): string {
  return `chatcmpl-${turnId.replace(/^turn_/, '').replace(/-/g, '')}`;
}

/** The turn id a `chatcmpl-…` id names; undefined for any other id. */
export function turnIdOfChatCompletion(id: string): string | undefined {
  const hex = /^chatcmpl-([0-9a-f]{32})$/.exec(id)?.[1];
  if (!hex) return undefined;
  return `turn_${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}
