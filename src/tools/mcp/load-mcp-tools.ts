import { readFile } from 'node:fs/promises';
import path from 'node:path';
import type { Tool } from '@modelcontextprotocol/sdk/types.js';
import { TOOL_NAME_PATTERN } from '@switchyard/protocol';
import type { Logger } from 'pino';
import { compileInputSchema } from '../argument-checker';
import type { ExecutableTool, ToolSource } from '../executable-tool';
import { errorMessage } from '../../errors/switchyard-error';
import { ToolLoadError } from '../tool-errors';
import { MCP_CONFIG_FILE, parseMcpConfig, type McpServerConfig } from './mcp-config';
import type { McpConnection } from './mcp-connection';

export interface LoadMcpToolsOptions {
  toolsDir: string;
  env: Record<string, string | undefined>;
  logger: Logger;
  /** Per attempt of a tool call (a server's `timeoutMs` wins), and the limit for starting a server and listing its tools. */
  timeoutMs: number;
}

/**
 * One retry by default: it is what lets a call survive its server dying (the retry restarts it).
 * Not more, because an MCP call carries no idempotency key, so a retry after a timeout may repeat
 * a side effect; a server whose tools are safe to repeat can say `"retries": n`.
 */
const DEFAULT_MCP_RETRIES = 1;

/**
 * Starts every server of `toolsDir/mcp.json` (in parallel) and lists its tools as
 * `<server>__<tool>`. A server that does not start is a `ToolLoadError` naming it: the service
 * refuses to start rather than run without tools it was configured with. No mcp.json, no servers.
 */
export async function loadMcpTools(options: LoadMcpToolsOptions): Promise<ToolSource> {
  const source = path.join(options.toolsDir, MCP_CONFIG_FILE);
  let text: string;
  try {
    text = await readFile(source, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT' || (error as NodeJS.ErrnoException).code === 'ENOTDIR') {
      return { tools: [], close: async () => undefined };
    }
    throw error;
  }
  const servers = parseMcpConfig(source, text, options.env);

  // The MCP SDK is loaded only where mcp.json names servers: loading it costs every process (and
  // every test file that starts a stack) a tenth of a second of CPU.
  const { McpConnection } = require('./mcp-connection') as typeof import('./mcp-connection');
  const connections = servers.map((server) => new McpConnection(server, { serviceEnv: options.env, connectTimeoutMs: options.timeoutMs, logger: options.logger }));
  const close = async () => {
    await Promise.all(connections.map((connection) => connection.close()));
  };

  const listed = await Promise.allSettled(
    connections.map(async (connection) => {
      await connection.connect();
      return { connection, tools: await connection.listTools() };
    }),
  );
  const failures = listed.flatMap((result, index) =>
    result.status === 'rejected' ? [`MCP server "${servers[index]!.name}" failed to start: ${errorMessage(result.reason)}`] : [],
  );
  if (failures.length) {
    await close();
    throw new ToolLoadError(`${source}: ${failures.join('; ')}`);
  }

  const tools = listed.flatMap((result) => (result.status === 'fulfilled' ? result.value.tools.flatMap((tool) => toExecutable(result.value.connection, tool, options)) : []));
  for (const server of servers) {
    options.logger.info({ server: server.name, tools: tools.filter((tool) => tool.source === sourceOf(server)).length }, 'MCP server started');
  }
  return { tools, close };
}

/** Tools are listed once, at load: a server's `tools/list_changed` takes a restart of the service. */
function toExecutable(connection: McpConnection, tool: Tool, options: LoadMcpToolsOptions): ExecutableTool[] {
  const server = connection.config;
  const name = `${server.name}__${tool.name}`;
  if (!TOOL_NAME_PATTERN.test(name)) {
    options.logger.warn({ server: server.name, tool: tool.name }, `MCP tool skipped: "${name}" is not a valid tool name (1 to 64 letters, digits, "_" or "-")`);
    return [];
  }
  let compiled: ReturnType<typeof compileInputSchema>;
  try {
    compiled = compileInputSchema(tool.inputSchema as Record<string, unknown>);
  } catch (error) {
    // One odd schema should not take the server's other tools (or the service) down with it.
    options.logger.warn({ server: server.name, tool: tool.name, err: error }, `MCP tool "${name}" skipped: its input schema is not valid JSON Schema`);
    return [];
  }
  const timeoutMs = server.timeoutMs ?? options.timeoutMs;
  return [
    {
      source: sourceOf(server),
      checker: compiled.checker,
      descriptor: {
        name,
        description: tool.description ?? tool.title ?? tool.annotations?.title ?? '',
        inputSchema: compiled.inputSchema,
        kind: 'mcp',
        timeoutMs,
        retries: server.retries ?? DEFAULT_MCP_RETRIES,
        ...(needsApproval(server, tool.name) ? { needsApproval: true } : {}),
        ...(server.approvalTimeoutMs !== undefined ? { approvalTimeoutMs: server.approvalTimeoutMs } : {}),
      },
      execute: (args, ctx) => connection.callTool(tool.name, args, ctx.signal, timeoutMs),
    },
  ];
}

function sourceOf(server: McpServerConfig): string {
  return `MCP server "${server.name}"`;
}

/** `needsApproval` of a server: every tool of it, or those it names (by the server's own names). */
function needsApproval(server: McpServerConfig, toolName: string): boolean {
  return server.needsApproval === true || (Array.isArray(server.needsApproval) && server.needsApproval.includes(toolName));
}
