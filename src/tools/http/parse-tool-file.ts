import { describeZodIssues, formatPath } from '../../errors/zod-issues';
import { substituteEnvironmentInMap } from '../environment-references';
import { parseEntries, parseJsonFile } from '../declaration-file';
import { ToolLoadError } from '../tool-errors';
import { fieldsToJsonSchema } from './fields-to-json-schema';
import { clientToolEntrySchema, httpToolEntrySchema, type HttpToolEntry } from './tool-file-schema';

/** What a tool file says about approvals, for either kind. */
interface ApprovalFields {
  needsApproval?: boolean;
  approvalTimeoutMs?: number;
}

export interface HttpToolDefinition extends ApprovalFields {
  kind: 'http';
  name: string;
  description: string;
  url: string;
  method: HttpToolEntry['method'];
  /** `${ENV_VAR}` references already resolved: these may hold secrets, never log them. */
  headers: Record<string, string>;
  timeoutMs: number;
  retries: number;
  inputSchema: Record<string, unknown>;
  /** The file it came from, for load errors. */
  source: string;
}

export interface ClientToolDefinition extends ApprovalFields {
  kind: 'client';
  name: string;
  description: string;
  timeoutMs: number;
  inputSchema: Record<string, unknown>;
  source: string;
}

export type FileToolDefinition = HttpToolDefinition | ClientToolDefinition;

/** A tool that takes no arguments still needs an object schema for the provider. */
const NO_ARGUMENTS = { type: 'object', properties: {}, additionalProperties: false };

/**
 * Parses one tool file: one tool, an array of tools, or `{"tools": [...]}`. Pure: the
 * environment for `${VAR}` in headers is passed in. Every problem of the file is reported in
 * one `ToolLoadError` whose message names the file and each field.
 */
export function parseToolFile(source: string, text: string, env: Record<string, string | undefined>): FileToolDefinition[] {
  const entries = entriesOf(parseJsonFile(source, text));
  if (!entries) throw new ToolLoadError(`${source}: expected a tool object, an array of tools, or {"tools": [...]}`);
  return parseEntries(source, entries, ({ entry, path }) => parseEntry(entry, path, env, source));
}

function entriesOf(document: unknown): { entry: unknown; path: PropertyKey[] }[] | undefined {
  if (Array.isArray(document)) return document.map((entry, index) => ({ entry, path: [index] }));
  if (!isObject(document)) return undefined;
  if ('tools' in document && !('name' in document)) {
    const tools = document.tools;
    return Array.isArray(tools) ? tools.map((entry, index) => ({ entry, path: ['tools', index] })) : undefined;
  }
  return [{ entry: document, path: [] }];
}

/** The definition, or a description of what is wrong with the entry. */
function parseEntry(entry: unknown, path: PropertyKey[], env: Record<string, string | undefined>, source: string): FileToolDefinition | string {
  const where = (field: string) => `"${formatPath([...path, field])}"`;
  if (!isObject(entry)) return `${path.length ? `"${formatPath(path)}"` : 'the file'} must be a tool object`;
  if (entry.kind !== undefined && entry.kind !== 'http' && entry.kind !== 'client') {
    return `${where('kind')} must be "http" or "client" (builtin tools are written in code; MCP tools come from mcp.json)`;
  }

  if (entry.kind === 'client') {
    if ('url' in entry) return `${where('url')}: a client tool has no url, a subscribed client runs it`;
    const parsed = clientToolEntrySchema.safeParse(entry);
    if (!parsed.success) return describeZodIssues(parsed.error.issues, path);
    const tool = parsed.data;
    return {
      kind: 'client',
      name: tool.name,
      description: tool.description,
      timeoutMs: tool.timeoutMs,
      inputSchema: inputSchemaOf(tool),
      source,
      ...approvalFieldsOf(tool),
    };
  }

  const parsed = httpToolEntrySchema.safeParse(entry);
  if (!parsed.success) return describeZodIssues(parsed.error.issues, path);
  const tool = parsed.data;
  const headers = substituteEnvironmentInMap(tool.headers, env);
  if (!headers.ok) return headers.problems.map((problem) => `"${formatPath([...path, 'headers', problem.key])}": ${problem.message}`).join('; ');
  return {
    kind: 'http',
    name: tool.name,
    description: tool.description,
    url: tool.url,
    method: tool.method,
    headers: headers.values,
    timeoutMs: tool.timeoutMs,
    retries: tool.retries,
    inputSchema: inputSchemaOf(tool),
    source,
    ...approvalFieldsOf(tool),
  };
}

function approvalFieldsOf(tool: { needsApproval: boolean; approvalTimeoutMs?: number | undefined }): ApprovalFields {
  return { ...(tool.needsApproval ? { needsApproval: true } : {}), ...(tool.approvalTimeoutMs !== undefined ? { approvalTimeoutMs: tool.approvalTimeoutMs } : {}) };
}

function inputSchemaOf(tool: { inputSchema?: Record<string, unknown>; fields?: Parameters<typeof fieldsToJsonSchema>[0] }): Record<string, unknown> {
  if (tool.inputSchema) return tool.inputSchema;
  if (tool.fields) return fieldsToJsonSchema(tool.fields);
  return NO_ARGUMENTS;
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
