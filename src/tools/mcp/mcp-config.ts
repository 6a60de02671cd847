import { z } from 'zod';
import { describeZodIssues, formatPath } from '../../errors/zod-issues';
import { substituteEnvironmentInMap } from '../environment-references';
import { parseEntries, parseJsonFile } from '../declaration-file';
import { ToolLoadError } from '../tool-errors';
import { toolUrlSchema } from '../tool-url-schema';

/*
 * `mcp.json`, in the `mcpServers` format that MCP clients (Claude Desktop, Cursor, VS Code)
 * share. Entries are loose objects: those clients add their own fields (`alwaysAllow`,
 * `autoApprove`), and a file copied from one of them should load. Switchyard's own additions are
 * `timeoutMs`, `retries`, `disabled`, `needsApproval` (true: every tool of the server; a list:
 * those tools, by their names on the server) and `approvalTimeoutMs`.
 */

/** The one file of the tools directory that is not a tool file. */
export const MCP_CONFIG_FILE = 'mcp.json';

/** A server name becomes the prefix of tool names (`<server>__<tool>`), so it keeps to the same characters. */
const SERVER_NAME = /^[A-Za-z0-9_-]{1,60}$/;

const commonFields = {
  /** Per attempt of a tool call. Default: the registry's `mcpTimeoutMs`. */
  timeoutMs: z.int().min(1).max(600_000).optional(),
  /** Extra attempts after the first. Default 1 (see load-mcp-tools.ts). */
  retries: z.int().min(0).max(10).optional(),
  disabled: z.boolean().optional(),
  needsApproval: z.union([z.boolean(), z.array(z.string().min(1))]).optional(),
  approvalTimeoutMs: z
    .int()
    .min(1000)
    .max(30 * 86_400_000)
    .optional(),
};

const stdioEntrySchema = z.looseObject({
  type: z.literal('stdio').optional(),
  command: z.string().min(1),
  args: z.array(z.string()).default([]),
  /** The whole environment the server gets (and PATH); values may reference `${ENV_VAR}`. */
  env: z.record(z.string(), z.string()).default({}),
  cwd: z.string().optional(),
  ...commonFields,
});

const httpEntrySchema = z.looseObject({
  type: z.enum(['http', 'streamable-http', 'streamableHttp']).optional(),
  url: toolUrlSchema,
  /** Values may reference `${ENV_VAR}`. */
  headers: z.record(z.string(), z.string()).default({}),
  ...commonFields,
});

const fileSchema = z.looseObject({ mcpServers: z.record(z.string(), z.unknown()) });

export type McpTransportConfig =
  { type: 'stdio'; command: string; args: string[]; env: Record<string, string>; cwd?: string } | { type: 'http'; url: string; headers: Record<string, string> };

export interface McpServerConfig {
  name: string;
  transport: McpTransportConfig;
  timeoutMs?: number;
  retries?: number;
  /** Every tool of the server, or those named (as the server names them). */
  needsApproval?: boolean | string[];
  approvalTimeoutMs?: number;
}

/**
 * Parses mcp.json: every enabled server, with `${VAR}` references resolved from `env` (passed in).
 * Every problem is reported in one `ToolLoadError` naming the file, the server and the field.
 */
export function parseMcpConfig(source: string, text: string, env: Record<string, string | undefined>): McpServerConfig[] {
  const file = fileSchema.safeParse(parseJsonFile(source, text));
  if (!file.success) throw new ToolLoadError(`${source}: ${describeZodIssues(file.error.issues)}`);
  return parseEntries(source, Object.entries(file.data.mcpServers), ([name, entry]) => parseServer(name, entry, env));
}

/** The server, undefined when disabled, or what is wrong with it. */
function parseServer(name: string, entry: unknown, env: Record<string, string | undefined>): McpServerConfig | undefined | string {
  const path = ['mcpServers', name];
  const where = (...fields: string[]) => `"${formatPath([...path, ...fields])}"`;
  if (!SERVER_NAME.test(name)) return `${where()}: a server name must be 1 to 60 letters, digits, "_" or "-" (it prefixes its tool names)`;
  if (typeof entry !== 'object' || entry === null || Array.isArray(entry)) return `${where()} must be an object`;
  const fields = entry as Record<string, unknown>;
  if (fields.disabled === true) return undefined;
  if (fields.type === 'sse') return `${where('type')}: the SSE transport is not supported; use a streamable HTTP "url"`;
  if ('command' in fields === 'url' in fields) {
    return `${where()}: give either "command" (a stdio server) or "url" (a streamable HTTP server)`;
  }

  if ('command' in fields) {
    const parsed = stdioEntrySchema.safeParse(entry);
    if (!parsed.success) return describeZodIssues(parsed.error.issues, path);
    const resolved = substituteEnvironmentInMap(parsed.data.env, env);
    if (!resolved.ok) return resolved.problems.map((problem) => `${where('env', problem.key)}: ${problem.message}`).join('; ');
    const { command, args, cwd, timeoutMs, retries, needsApproval, approvalTimeoutMs } = parsed.data;
    return {
      name,
      transport: { type: 'stdio', command, args, env: resolved.values, ...(cwd ? { cwd } : {}) },
      timeoutMs,
      retries,
      needsApproval,
      approvalTimeoutMs,
    };
  }

  const parsed = httpEntrySchema.safeParse(entry);
  if (!parsed.success) return describeZodIssues(parsed.error.issues, path);
  const resolved = substituteEnvironmentInMap(parsed.data.headers, env);
  if (!resolved.ok) return resolved.problems.map((problem) => `${where('headers', problem.key)}: ${problem.message}`).join('; ');
  const { url, timeoutMs, retries, needsApproval, approvalTimeoutMs } = parsed.data;
  return { name, transport: { type: 'http', url, headers: resolved.values }, timeoutMs, retries, needsApproval, approvalTimeoutMs };
}
