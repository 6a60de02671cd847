import { Router } from 'express';
import { AppError, notFound } from '../errors/app-error';
import type { ToolInvocation } from '../store/tool-invocations-repository';
import type { ToolRegistry } from '../tools/tool';
import { invokeTool, type ToolInvocationDeps } from '../tool-calls/tool-invocations';
import { userIdOf } from './require-user';
import { usableTools } from './usable-tools';
import { parseInput } from './validate';
import { toolInvocationSchema, toolListSchema } from './contract/tools-contract';
import { idempotencyKeyHeaderSchema, invokeToolSchema } from './request-schemas';
import { sendJson } from './send-json';

export interface ToolsRouterDeps extends ToolInvocationDeps {
  tools: ToolRegistry;
  userAllowedTools(userId: string): Promise<string[] | null>;
}

const durationOf = (invocation: ToolInvocation) =>
  invocation.startedAt && invocation.finishedAt ? Math.max(0, Date.parse(invocation.finishedAt) - Date.parse(invocation.startedAt)) : 0;

/** `GET /v1/tools` and `POST /v1/tools/:name/invoke`: the tools a user may use, run directly. */
export function toolsRouter(deps: ToolsRouterDeps): Router {
  const router = Router();

  router.get('/', async (_req, res) => {
    const tools = await usableTools(deps, userIdOf(res));
    sendJson(res, toolListSchema, {
      tools: tools.map(({ name, description, inputSchema, kind, needsApproval }) => ({ name, description, inputSchema, kind, needsApproval: needsApproval ?? false })),
    });
  });

  router.post('/:name/invoke', async (req, res) => {
    const userId = userIdOf(res);
    const tool = (await usableTools(deps, userId)).find((each) => each.name === req.params.name);
    if (!tool) throw notFound('tool');
    if (tool.kind === 'client') throw new AppError('invalid_request', 'a client tool runs in the client; it cannot be invoked here');
    const { params } = parseInput(invokeToolSchema, req.body);
    const { 'idempotency-key': idempotencyKey } = parseInput(idempotencyKeyHeaderSchema, req.headers);
    const checked = deps.tools.checkArguments(tool.name, JSON.stringify(params));
    if (!checked.ok) throw new AppError('invalid_request', checked.error.message, [{ field: 'params', message: checked.error.message }]);

    const invocation = await invokeTool(deps, { userId, tool, params: checked.args, idempotencyKey });
    if (!invocation) {
      throw new AppError('unavailable', 'the invocation has not finished yet; repeat the request with the same Idempotency-Key for its outcome', undefined, 5);
    }
    const attempts = { attempts: invocation.attempts, durationMs: durationOf(invocation) };
    if (invocation.status === 'succeeded') {
      sendJson(res, toolInvocationSchema, { result: invocation.result, ...attempts });
      return;
    }
    throw new AppError('tool_failed', `the tool failed: ${invocation.error?.message ?? 'unknown error'}`, { ...invocation.error, ...attempts });
  });

  return router;
}
