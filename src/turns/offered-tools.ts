/**
 * Which tools a turn offers the model (API.md): the turn's list, else the conversation's,
 * else every tool the user may use. `[]` offers none. Pure; names not in `available` are
 * dropped here (the API refuses unknown names before a turn is created).
 */
export function offeredToolNames(input: {
  turnTools: string[] | undefined;
  conversationTools: string[] | null;
  userAllowedTools: string[] | null;
  available: string[];
}): string[] {
  const allowedForUser = input.userAllowedTools ? new Set(input.userAllowedTools) : null;
  const requested = input.turnTools ?? input.conversationTools ?? input.available;
  const available = new Set(input.available);
  return requested.filter((name) => available.has(name) && (!allowedForUser || allowedForUser.has(name)));
}
