import { z } from 'zod';
import { documentPaths, jsonResponse } from './operation';
import { timestamp } from './shared-schemas';

const dependencyCheck = z.object({
  ok: z.boolean(),
  latencyMs: z.number().nonnegative().optional().meta({ description: 'How long it took to answer, when it did.' }),
  error: z.string().optional().meta({ description: 'Why it did not answer, in words an operator acts on.' }),
  checkedAt: z.optional(timestamp).meta({ description: "When the answer was had, for a check whose answer is kept a while (the provider's)." }),
});

export const healthSchema = z.object({ status: z.literal('ok') }).meta({ id: 'Health' });

export const readinessSchema = z
  .object({
    status: z.enum(['ready', 'degraded', 'unavailable']),
    checks: z.object({
      redis: dependencyCheck,
      database: dependencyCheck,
      provider: dependencyCheck.optional().meta({ description: 'Absent in a process with no provider of its own to check (an API without LLM_BASE_URL).' }),
    }),
  })
  .meta({ id: 'Readiness' });

export const healthPaths = documentPaths('Operations', {
  '/healthz': {
    get: { operationId: 'health', summary: 'The process is alive', access: 'public', responses: { '200': jsonResponse('Alive.', healthSchema) } },
  },
  '/readyz': {
    get: {
      operationId: 'readiness',
      summary: 'Redis and the database answer',
      description: 'A provider that does not answer is reported (`degraded`) but the answer stays 200: turns are queued and retried.',
      access: 'public',
      responses: {
        '200': jsonResponse('Ready (or degraded).', readinessSchema),
        '503': { ...jsonResponse('Redis or the database does not answer.', readinessSchema), headers: z.object({ 'Retry-After': z.string() }) },
      },
    },
  },
  '/metrics': {
    get: {
      operationId: 'metrics',
      summary: 'Prometheus metrics',
      access: 'public',
      responses: { '200': { description: 'The Prometheus text format.', content: { 'text/plain': { schema: { type: 'string' } } } } },
    },
  },
  '/openapi.json': {
    get: {
      operationId: 'openApiDocument',
      summary: 'This document',
      access: 'public',
      responses: { '200': { description: 'The OpenAPI 3.1 document.', content: { 'application/json': { schema: { type: 'object' } } } } },
    },
  },
  '/': {
    get: {
      operationId: 'playground',
      summary: 'The playground page',
      access: 'public',
      responses: { '200': { description: 'The playground (HTML, with its app.js and app.css beside it).', content: { 'text/html': { schema: { type: 'string' } } } } },
    },
  },
});
