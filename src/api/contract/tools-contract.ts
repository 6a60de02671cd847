import { toolKindSchema } from '@switchyard/protocol';
import { z } from 'zod';
import { idempotencyKeyHeaderSchema, invokeToolSchema } from '../request-schemas';
import { documentPaths, jsonResponse } from './operation';
import { count } from './shared-schemas';

export const toolSchema = z
  .object({
    name: z.string(),
    description: z.string(),
    inputSchema: z.record(z.string(), z.unknown()).meta({ description: "A JSON Schema for the tool's arguments." }),
    kind: toolKindSchema,
    needsApproval: z.boolean().meta({ description: 'A call of it runs only once a person approves it.' }),
  })
  .meta({ id: 'Tool' });

export const toolListSchema = z.object({ tools: z.array(toolSchema) }).meta({ id: 'ToolList' });

export const toolInvocationSchema = z.object({ result: z.unknown(), attempts: count, durationMs: z.number().nonnegative() }).meta({ id: 'ToolInvocation' });

export const toolPaths = documentPaths('Tools', {
  '/v1/tools': {
    get: {
      operationId: 'listTools',
      summary: 'The tools the user may use',
      access: 'user',
      responses: { '200': jsonResponse('The tools.', toolListSchema) },
    },
  },
  '/v1/tools/{name}/invoke': {
    post: {
      operationId: 'invokeTool',
      summary: 'Run a tool directly, on the workers',
      description:
        "The same `Idempotency-Key` gets the stored outcome, never a second run. One that has not finished within the tool's time budget answers 503 `unavailable`: repeat it with the same key.",
      access: 'user',
      requestParams: { path: z.object({ name: z.string().meta({ description: "The tool's name." }) }), header: idempotencyKeyHeaderSchema },
      jsonBody: invokeToolSchema,
      responses: { '200': jsonResponse("The tool's result.", toolInvocationSchema) },
      errors: ['not_found', 'idempotency_conflict', 'tool_failed'],
    },
  },
});
