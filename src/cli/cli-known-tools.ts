import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { defaultBuiltinTools } from '../tools/builtin/default-builtins';
import { loadToolFiles } from '../tools/http/load-tool-files';
import { MCP_CONFIG_FILE, parseMcpConfig } from '../tools/mcp/mcp-config';
import type { KnownTools } from '../tools/known-tools';

/**
 * The tools the service knows, read as a service process reads them (the builtins and the tool
 * files of TOOLS_DIR), without starting anything: the MCP servers of mcp.json are named, their
 * tools taken on trust.
 */
export async function knownToolsForCli(toolsDir: string, env: Record<string, string | undefined>): Promise<KnownTools> {
  const files = await loadToolFiles({ toolsDir, env });
  const mcpFile = path.join(toolsDir, MCP_CONFIG_FILE);
  const servers = existsSync(mcpFile) ? parseMcpConfig(mcpFile, await readFile(mcpFile, 'utf8'), env) : [];
  const names = [...defaultBuiltinTools().map((tool) => tool.name), ...files.map((tool) => tool.descriptor.name)].sort();
  return { names, mcpServers: servers.map((server) => server.name) };
}
