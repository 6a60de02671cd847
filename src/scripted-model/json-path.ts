/** `['messages', 0, 'content']` → `messages[0].content`: how both OpenAI and people name a spot in JSON. */
export function formatPath(path: readonly PropertyKey[]): string {
  return path.map((key, i) => (typeof key === 'number' ? `[${key}]` : `${i === 0 ? '' : '.'}${String(key)}`)).join('');
}
