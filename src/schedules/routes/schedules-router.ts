import { Router } from 'express';
import { formatAgentReference } from '../../agents/agent-reference';
import type { AgentReferences } from '../../agents/agent-references';
import { notFound } from '../../errors/app-error';
import { userIdOf } from '../../api/require-user';
import { sendJson } from '../../api/send-json';
import { parseInput, parseRouteId } from '../../api/validate';
import type { ConversationsRepository } from '../../store/conversations-repository';
import { everyMs, formatEvery, createScheduleSchema, patchScheduleSchema } from '../schedule-request';
import type { ScheduleRunner } from '../schedule-runner';
import { nextRunAfter, planOf } from '../schedule-ticks';
import { changesPlan, patchedSchedule } from '../schedule-patch';
import type { Schedule, ScheduleRun, SchedulesRepository } from '../store/schedules-repository';
import { listQuerySchema, schedulePageSchema, scheduleRunPageSchema, scheduleRunSchema, scheduleSchema } from './schedules-contract';

export interface SchedulesRouterDeps {
  schedules: SchedulesRepository;
  runner: Pick<ScheduleRunner, 'run'>;
  agentReferences: Pick<AgentReferences, 'resolve'>;
  conversations: Pick<ConversationsRepository, 'get'>;
  now?: () => Date;
}

/** `/v1/schedules` (docs/API.md, "Schedules"). */
export function schedulesRouter(deps: SchedulesRouterDeps): Router {
  const router = Router();
  const now = deps.now ?? (() => new Date());
  const owned = async (userId: string, id: string | undefined) => {
    const schedule = await deps.schedules.get(userId, parseRouteId(id, 'schedule'));
    if (!schedule) throw notFound('schedule');
    return schedule;
  };

  router.post('/', async (req, res) => {
    const body = parseInput(createScheduleSchema, req.body);
    const userId = userIdOf(res);
    if (body.conversationId !== undefined && !(await deps.conversations.get(userId, body.conversationId))) throw notFound('conversation');
    const agent = body.agent === undefined ? null : await deps.agentReferences.resolve(userId, body.agent);
    const created = now();
    const interval = body.every === undefined ? null : everyMs(body.every);
    const plan = {
      cron: body.cron ?? null,
      everyMs: interval,
      firstAt: interval === null ? null : (body.startAt ?? new Date(created.getTime() + interval)),
      at: body.at ?? null,
      timezone: body.timezone,
    };
    // The first tick: an interval's is firstAt itself; a cron's or an at's the first after now, not before startAt.
    const from = plan.firstAt ? plan.firstAt.getTime() - 1 : Math.max(created.getTime(), (body.startAt?.getTime() ?? 0) - 1);
    const first = nextRunAfter(planOf(plan), new Date(from), body.endAt ?? null);
    const schedule = await deps.schedules.create({
      userId,
      content: body.content,
      agentId: agent?.agentId ?? null,
      agentVersion: agent?.agentVersion ?? null,
      conversationId: body.conversationId ?? null,
      ...plan,
      overlap: body.overlap,
      catchUp: body.catchUp,
      enabled: body.enabled,
      startAt: body.startAt ?? null,
      endAt: body.endAt ?? null,
      metadata: body.metadata ?? null,
      nextRunAt: body.enabled ? first : null,
    });
    sendJson(res, scheduleSchema, scheduleView(schedule), 201);
  });

  router.get('/', async (req, res) => {
    const query = parseInput(listQuerySchema, req.query);
    const page = await deps.schedules.list(userIdOf(res), { limit: query.limit, ...(query.cursor ? { before: query.cursor } : {}) });
    sendJson(res, schedulePageSchema, { data: page.data.map(scheduleView), nextCursor: page.nextCursor });
  });

  router.get('/:id', async (req, res) => {
    sendJson(res, scheduleSchema, scheduleView(await owned(userIdOf(res), req.params.id)));
  });

  router.patch('/:id', async (req, res) => {
    const schedule = await owned(userIdOf(res), req.params.id);
    const patch = parseInput(patchScheduleSchema, req.body);
    const next = patchedSchedule(schedule, patch, now());
    sendJson(res, scheduleSchema, scheduleView(await deps.schedules.update(next, { releaseClaim: changesPlan(patch) })));
  });

  router.delete('/:id', async (req, res) => {
    if (!(await deps.schedules.delete(userIdOf(res), parseRouteId(req.params.id, 'schedule')))) throw notFound('schedule');
    res.status(204).end();
  });

  router.post('/:id/trigger', async (req, res) => {
    const schedule = await owned(userIdOf(res), req.params.id);
    sendJson(res, scheduleRunSchema, runView(await deps.runner.run(schedule, now())), 201);
  });

  router.get('/:id/runs', async (req, res) => {
    const schedule = await owned(userIdOf(res), req.params.id);
    const query = parseInput(listQuerySchema, req.query);
    const page = await deps.schedules.runs(schedule.id, { limit: query.limit, ...(query.cursor ? { before: query.cursor } : {}) });
    sendJson(res, scheduleRunPageSchema, { data: page.data.map(runView), nextCursor: page.nextCursor });
  });

  return router;
}

const iso = (date: Date | null) => date?.toISOString() ?? null;

function scheduleView(schedule: Schedule) {
  return {
    id: schedule.id,
    content: schedule.content,
    agent: schedule.agentId === null ? null : formatAgentReference({ agentId: schedule.agentId, agentVersion: schedule.agentVersion }),
    conversationId: schedule.conversationId,
    cron: schedule.cron,
    every: schedule.everyMs === null ? null : formatEvery(schedule.everyMs),
    at: iso(schedule.at),
    timezone: schedule.timezone,
    overlap: schedule.overlap,
    catchUp: schedule.catchUp,
    enabled: schedule.enabled,
    startAt: iso(schedule.startAt),
    endAt: iso(schedule.endAt),
    metadata: schedule.metadata,
    nextRunAt: iso(schedule.nextRunAt),
    createdAt: schedule.createdAt.toISOString(),
    updatedAt: schedule.updatedAt.toISOString(),
  };
}

function runView(run: ScheduleRun) {
  return {
    runId: run.runId,
    scheduledFor: run.scheduledFor.toISOString(),
    startedAt: run.startedAt.toISOString(),
    status: run.status,
    ...(run.turnId ? { turnId: run.turnId } : {}),
    ...(run.conversationId ? { conversationId: run.conversationId } : {}),
    ...(run.reason ? { reason: run.reason } : {}),
  };
}
