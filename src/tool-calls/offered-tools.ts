/**
 * Which tools a turn offers the model (API.md): the turn's list, else the conversation's,
 * else every tool the user may use. `[]` offers none. Pure; names not in `available` are
 * dropped here (the API refuses unknown names before a turn is created).
 */
export function offeredToolNames(input: { turnTools: string[] | undefined; conversationTools: string[] | null; userAllowedTools: string[] | null; available: string[] }): string[] {
  const allowedForUser = input.userAllowedTools ? new Set(input.userAllowedTools) : null;
  const requested = input.turnTools ?? input.conversationTools ?? input.available;
  const available = new Set(input.available);
  return requested.filter((name) => available.has(name) && (!allowedForUser || allowedForUser.has(name)));
}

/**
 * The offered tools in the order the model is given them: the ones the service runs first,
 * client tools last. A model told only to "use tools" takes the first ones it is given (the
 * scripted model takes three), and a client tool waits for a client to answer it, which a curl
 * or `watch` user never does; so a general ask reaches the tools that answer by themselves first.
 * Stable otherwise (the registry's name order).
 */
export function inOfferOrder<T extends { kind: string }>(tools: readonly T[]): T[] {
  return [...tools.filter((tool) => tool.kind !== 'client'), ...tools.filter((tool) => tool.kind === 'client')];
}
