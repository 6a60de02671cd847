import { compileInputSchema } from '../argument-checker';
import type { ExecutableTool } from '../executable-tool';
import type { ClientToolDefinition } from '../http/parse-tool-file';

/**
 * A `client` tool: declared like an http tool, run by a subscribed client (the browser). The
 * server only checks its arguments and waits for the answer (tool-calls/client-tool-answers.ts), so
 * executing it here is a mistake the caller hears about rather than a silent no-op.
 */
export function createClientTool(definition: ClientToolDefinition): ExecutableTool {
  const { inputSchema, checker } = compileInputSchema(definition.inputSchema);
  return {
    source: definition.source,
    checker,
    descriptor: {
      name: definition.name,
      description: definition.description,
      inputSchema,
      kind: 'client',
      timeoutMs: definition.timeoutMs,
      // A client answers once; the server never asks twice.
      retries: 0,
    },
    async execute() {
      return {
        ok: false,
        error: { code: 'client_tool', message: `"${definition.name}" is a client tool: a subscribed client runs it`, retryable: false },
      };
    },
  };
}
