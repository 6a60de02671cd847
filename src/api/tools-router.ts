import { randomUUID } from 'node:crypto';
import { Router } from 'express';
import { z } from 'zod';
import { AppError, notFound } from '../errors/app-error';
import type { ToolRegistry } from '../tools/tool';
import { userIdOf } from './require-user';
import { usableTools } from './usable-tools';
import { parseInput } from './validate';

export interface ToolsRouterDeps {
  tools: ToolRegistry;
  userAllowedTools(userId: string): Promise<string[] | null>;
}

const invokeSchema = z.object({ params: z.record(z.string(), z.unknown()).default({}) }).strict();

/** `GET /v1/tools` and `POST /v1/tools/:name/invoke`: the tools a user may use, run directly. */
export function toolsRouter(deps: ToolsRouterDeps): Router {
  const router = Router();

  router.get('/', async (_req, res) => {
    const tools = await usableTools(deps, userIdOf(res));
    res.json({ tools: tools.map(({ name, description, inputSchema, kind }) => ({ name, description, inputSchema, kind })) });
  });

  router.post('/:name/invoke', async (req, res) => {
    const tool = (await usableTools(deps, userIdOf(res))).find((each) => each.name === req.params.name);
    if (!tool) throw notFound('tool');
    if (tool.kind === 'client') throw new AppError('invalid_request', 'a client tool runs in the client; it cannot be invoked here');
    const { params } = parseInput(invokeSchema, req.body);
    const checked = deps.tools.checkArguments(tool.name, JSON.stringify(params));
    if (!checked.ok) throw new AppError('invalid_request', checked.error.message, [{ field: 'params', message: checked.error.message }]);

    const started = Date.now();
    const context = { turnId: `invoke-${randomUUID()}`, toolCallId: 'invoke' };
    const controller = new AbortController();
    req.on('close', () => {
      if (!res.writableEnded) controller.abort();
    });
    for (let attempt = 1; ; attempt++) {
      const outcome = await deps.tools.execute(tool.name, checked.args, { ...context, attempt, signal: controller.signal });
      if (outcome.ok) {
        res.json({ result: outcome.result, attempts: attempt, durationMs: Date.now() - started });
        return;
      }
      if (!outcome.error.retryable || attempt > tool.retries || controller.signal.aborted) {
        const { retryable: _retryable, ...error } = outcome.error;
        throw new AppError('tool_failed', `the tool failed: ${outcome.error.message}`, { ...error, attempts: attempt, durationMs: Date.now() - started });
      }
      await new Promise((resolve) => setTimeout(resolve, Math.min(2000, 200 * 2 ** (attempt - 1))));
    }
  });

  return router;
}
