import { readdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import { createClientTool } from '../client/client-tool';
import type { ExecutableTool } from '../executable-tool';
import { MCP_CONFIG_FILE } from '../mcp/mcp-config';
import { errorMessage } from '../../errors/switchyard-error';
import { ToolLoadError } from '../tool-errors';
import { createHttpTool, type HttpToolOptions } from './http-tool';
import { parseToolFile, type FileToolDefinition } from './parse-tool-file';

/**
 * Reads every `*.json` file of the tools directory but mcp.json, in name order, and builds its
 * http and client tools. A directory that does not exist holds no tools (TOOLS_DIR has a default
 * that a fresh checkout may not have); anything wrong in a file is a `ToolLoadError`.
 */
export async function loadToolFiles(options: { toolsDir: string; env: Record<string, string | undefined>; http?: HttpToolOptions }): Promise<ExecutableTool[]> {
  const files = await listToolFiles(options.toolsDir);
  const tools: ExecutableTool[] = [];
  for (const file of files) {
    const source = path.join(options.toolsDir, file);
    const text = await readFile(source, 'utf8');
    for (const definition of parseToolFile(source, text, options.env)) tools.push(toExecutable(definition, options.http));
  }
  return tools;
}

async function listToolFiles(toolsDir: string): Promise<string[]> {
  try {
    const entries = await readdir(toolsDir, { withFileTypes: true });
    return entries
      .filter((entry) => entry.isFile() && entry.name.endsWith('.json') && entry.name !== MCP_CONFIG_FILE)
      .map((entry) => entry.name)
      .sort();
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return [];
    if ((error as NodeJS.ErrnoException).code === 'ENOTDIR') throw new ToolLoadError(`${toolsDir}: the tools directory is not a directory`);
    throw error;
  }
}

function toExecutable(definition: FileToolDefinition, http: HttpToolOptions | undefined): ExecutableTool {
  try {
    return definition.kind === 'client' ? createClientTool(definition) : createHttpTool(definition, http);
  } catch (error) {
    // Only the schema compilation throws: Ajv's reason says which keyword is wrong.
    throw new ToolLoadError(`${definition.source}: tool "${definition.name}": the input schema is not valid JSON Schema: ${errorMessage(error)}`);
  }
}
