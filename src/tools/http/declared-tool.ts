import { compileInputSchema } from '../argument-checker';
import type { ExecutableTool } from '../executable-tool';
import type { FileToolDefinition } from './parse-tool-file';

/**
 * What a tool declared in a tool file is to the registry apart from running it: its schema
 * compiled, its descriptor and where it came from. An http and a client tool differ only in
 * how they run and how often a call is tried (`retries`).
 */
export function declaredTool(definition: FileToolDefinition, retries: number): Omit<ExecutableTool, 'execute'> {
  const { inputSchema, checker } = compileInputSchema(definition.inputSchema);
  return {
    source: definition.source,
    checker,
    descriptor: {
      name: definition.name,
      description: definition.description,
      inputSchema,
      kind: definition.kind,
      timeoutMs: definition.timeoutMs,
      retries,
      ...(definition.needsApproval ? { needsApproval: true } : {}),
      ...(definition.approvalTimeoutMs !== undefined ? { approvalTimeoutMs: definition.approvalTimeoutMs } : {}),
    },
  };
}
