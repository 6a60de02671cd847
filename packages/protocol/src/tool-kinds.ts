import * as z from 'zod/mini';

/**
 * Where a tool comes from and who runs it (docs/API.md, "Tools"): written in Switchyard's code, an
 * HTTP endpoint of a tool file, an MCP server's, or run by a client over the websocket. `GET
 * /v1/tools` lists each tool's, and a turn's tool calls name theirs.
 */
export const TOOL_KINDS = ['builtin', 'http', 'mcp', 'client'] as const;
export type ToolKind = (typeof TOOL_KINDS)[number];
export const toolKindSchema = z.enum(TOOL_KINDS);

/** The kinds as prose: "`builtin`, `http`, `mcp` or `client`". */
export const toolKindsInWords = `${TOOL_KINDS.slice(0, -1)
  .map((kind) => `\`${kind}\``)
  .join(', ')} or \`${TOOL_KINDS.at(-1)}\``;
