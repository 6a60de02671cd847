/**
 * The tool names an admin may limit a user to. Where MCP tools are not listed (the CLI starts
 * no MCP server), `mcpServers` names the servers of mcp.json, whose `<server>__<tool>` names
 * are taken on trust.
 */
export interface KnownTools {
  names: readonly string[];
  mcpServers?: readonly string[];
}

/** The requested names that are no tool of `known`, in the order given. Pure. */
export function unknownToolNames(requested: readonly string[], known: KnownTools): string[] {
  const names = new Set(known.names);
  const servers = known.mcpServers ?? [];
  return requested.filter((name) => !names.has(name) && !servers.some((server) => name.startsWith(`${server}__`) && name.length > server.length + 2));
}

/** "calculator, current_time and any tool of the MCP server "files" (files__<tool>)", for a refusal. */
export function describeKnownTools(known: KnownTools): string {
  const parts = [...known.names];
  for (const server of known.mcpServers ?? []) parts.push(`any tool of the MCP server "${server}" (${server}__<tool>)`);
  return parts.length > 0 ? parts.join(', ') : 'none';
}

/** One line: which names are unknown and which are known. */
export function unknownToolsMessage(unknown: readonly string[], known: KnownTools): string {
  return `unknown tools: ${unknown.join(', ')}; the known tools are: ${describeKnownTools(known)}`;
}
