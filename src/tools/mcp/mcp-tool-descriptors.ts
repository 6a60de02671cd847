import type { RedisClient } from '../../redis/redis-connection';
import type { Logger } from 'pino';
import { z } from 'zod';
import type { ExecutableTool } from '../executable-tool';
import { compileInputSchema } from '../argument-checker';
import type { ToolDescriptor } from '../tool';

/*
 * MCP servers run only where tools run (the workers): an API process lists, validates and
 * offers MCP tools from the descriptors the workers publish to Redis, without starting a server.
 */

const key = (prefix: string) => `${prefix}:mcp-tool-descriptors`;

const descriptorsSchema = z.array(
  z.object({
    name: z.string(),
    description: z.string(),
    inputSchema: z.record(z.string(), z.unknown()),
    kind: z.literal('mcp'),
    timeoutMs: z.number(),
    retries: z.number(),
    needsApproval: z.boolean().optional(),
    approvalTimeoutMs: z.number().optional(),
  }),
);

/** A worker, once its MCP servers have listed their tools. Workers share TOOLS_DIR: the last one's list stands. */
export async function publishMcpToolDescriptors(redis: RedisClient, prefix: string, tools: ToolDescriptor[]): Promise<void> {
  await redis.set(key(prefix), JSON.stringify(tools.filter((tool) => tool.kind === 'mcp')));
}

/**
 * A reader of the published MCP tools, as tools that can be listed and checked but not run here
 * (nothing in an API process executes a tool: invocations and turns run on the workers). None
 * until a worker has published. It answers the same array while the published text is the same,
 * so that its caller rebuilds (and compiles schemas) only on a change.
 */
export function mcpToolDescriptorReader(redis: RedisClient, prefix: string, logger: Logger): () => Promise<ExecutableTool[]> {
  let last: { text: string | null; tools: ExecutableTool[] } = { text: null, tools: [] };
  return async () => {
    const text = await redis.get(key(prefix));
    if (text !== last.text) last = { text, tools: text === null ? [] : toDescribedTools(text, logger) };
    return last.tools;
  };
}

function toDescribedTools(text: string, logger: Logger): ExecutableTool[] {
  const parsed = descriptorsSchema.safeParse(JSON.parse(text));
  if (!parsed.success) {
    logger.warn('the published MCP tool descriptors do not parse; listing no MCP tools');
    return [];
  }
  return parsed.data.map((descriptor) => ({
    descriptor,
    checker: compileInputSchema(descriptor.inputSchema).checker,
    source: 'MCP tools published by the workers',
    execute: async () => ({ ok: false, error: { code: 'not_here', message: 'MCP tools run on the workers', retryable: false } }),
  }));
}
