import type { ExecutableTool } from '../executable-tool';
import { declaredTool } from '../http/declared-tool';
import type { ClientToolDefinition } from '../http/parse-tool-file';

/**
 * A `client` tool: declared like an http tool, run by a subscribed client (the browser). The
 * server only checks its arguments and waits for the answer (tool-calls/client-tool-answers.ts), so
 * executing it here is a mistake the caller hears about rather than a silent no-op.
 */
export function createClientTool(definition: ClientToolDefinition): ExecutableTool {
  return {
    // A client answers once; the server never asks twice.
    ...declaredTool(definition, 0),
    async execute() {
      return {
        ok: false,
        error: { code: 'client_tool', message: `"${definition.name}" is a client tool: a subscribed client runs it`, retryable: false },
      };
    },
  };
}
