import { AppError } from '../errors/app-error';
import type { ToolDefinition } from '../providers/model-provider';
import type { ToolDescriptor } from '../tools/tool';

/** The tools one user may use, by name, as far as the rule below needs them. */
export type UsableTools = ReadonlyMap<string, Pick<ToolDescriptor, 'kind' | 'needsApproval'>>;

/** A `function` tool of an OpenAI request, whichever API's shape it came in. */
export interface RequestedFunction {
  name: string;
  description?: string | null;
  /** Absent or null: the function declares no parameters. */
  parameters?: Record<string, unknown> | null;
}

export type FunctionToolsOutcome =
  { ok: true; serverTools: string[]; functions: ToolDefinition[] } | { ok: false; code: 'unsupported_parameter' | 'invalid_request'; message: string };

/**
 * Which of a request's functions Switchyard runs and which are the caller's (docs/API.md,
 * "OpenAI-compatible routes"): the one rule of Responses, Chat Completions and batch lines. Pure.
 * 1. A function that declares `parameters` is the caller's, whatever its name: its schema is
 *    what the model sees, and its calls end the answer for the caller (a caller's own
 *    `calculator` is never Switchyard's).
 * 2. One that declares none and is named after a builtin, http or mcp tool of `usable` that needs
 *    no approval runs here, in the tool loop, with that tool's schema.
 * 3. Named so after a client tool or one needing approval, it is refused: neither could end
 *    here, as a client tool waits for a websocket client and an approval for a person, which
 *    an OpenAI caller has neither of.
 * 4. Any other is the caller's, taking no arguments.
 */
export function splitFunctionTools(requested: readonly RequestedFunction[], usable: UsableTools): FunctionToolsOutcome {
  const names = new Set<string>();
  const serverTools: string[] = [];
  const functions: ToolDefinition[] = [];
  for (const { name, description, parameters } of requested) {
    // Two functions of one name would reach the model as two tools it cannot tell apart.
    if (names.has(name)) return { ok: false, code: 'invalid_request', message: `"${name}" is declared twice; function names are unique in a request` };
    names.add(name);
    const tool = parameters == null ? usable.get(name) : undefined;
    if (!tool) {
      functions.push({ name, description: description ?? '', inputSchema: parameters ?? { type: 'object', properties: {} } });
    } else if (tool.kind === 'client' || tool.needsApproval) {
      const what = tool.kind === 'client' ? 'a client tool, which a websocket client runs' : "a tool whose calls wait for a person's approval";
      const message = `"${name}" declares no parameters, so it names Switchyard's tool "${name}", ${what}: it cannot run server-side here; declare the function with its parameters to take its calls yourself`;
      return { ok: false, code: 'unsupported_parameter', message };
    } else {
      serverTools.push(name);
    }
  }
  return { ok: true, serverTools, functions };
}

/** A refused split as the 400 of a request whose `tools` field is at fault. */
export function functionToolsError(outcome: Extract<FunctionToolsOutcome, { ok: false }>, field = 'tools'): AppError {
  const kind = outcome.code === 'unsupported_parameter' ? 'unsupported parameter' : 'invalid request';
  return new AppError(outcome.code, `${kind}: ${field}: ${outcome.message}`, [{ field, message: outcome.message }]);
}
