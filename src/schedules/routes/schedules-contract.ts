import { z } from 'zod';
import { documentPaths, jsonResponse } from '../../api/contract/operation';
import { idParams, pageOf, timestamp } from '../../api/contract/shared-schemas';
import { createScheduleSchema, patchScheduleSchema } from '../schedule-request';

export const scheduleSchema = z
  .object({
    id: z.string().meta({ description: '`sched_…`' }),
    content: z.unknown(),
    agent: z.string().nullable(),
    conversationId: z.string().nullable(),
    cron: z.string().nullable(),
    every: z.string().nullable(),
    at: z.nullable(timestamp),
    timezone: z.string(),
    overlap: z.enum(['skip', 'enqueue', 'interrupt']),
    catchUp: z.enum(['one', 'skip']),
    enabled: z.boolean(),
    startAt: z.nullable(timestamp),
    endAt: z.nullable(timestamp),
    metadata: z.record(z.string(), z.unknown()).nullable(),
    nextRunAt: z.nullable(timestamp).meta({ description: 'The next tick; null when paused or none is left.' }),
    createdAt: timestamp,
    updatedAt: timestamp,
  })
  .meta({ id: 'Schedule' });

export const scheduleRunSchema = z
  .object({
    runId: z.string(),
    scheduledFor: timestamp,
    startedAt: timestamp,
    status: z.enum(['started', 'skipped', 'refused']),
    turnId: z.string().optional(),
    conversationId: z.string().optional(),
    reason: z.string().optional(),
  })
  .meta({ id: 'ScheduleRun' });

export const listQuerySchema = z.strictObject({
  limit: z.coerce.number().int().min(1).max(100).default(20),
  cursor: z
    .string()
    .regex(/^\d{1,18}$/, 'not a cursor from this API')
    .optional(),
});

export const schedulePageSchema = pageOf(scheduleSchema).check(z.meta({ id: 'SchedulePage' }));
export const scheduleRunPageSchema = pageOf(scheduleRunSchema).check(z.meta({ id: 'ScheduleRunPage' }));

const scheduleId = idParams('schedule');

export const schedulePaths = documentPaths('Schedules', {
  '/v1/schedules': {
    post: {
      operationId: 'createSchedule',
      summary: 'Make a schedule',
      access: 'user',
      jsonBody: createScheduleSchema,
      responses: { '201': jsonResponse('The schedule.', scheduleSchema) },
      errors: ['not_found'],
    },
    get: {
      operationId: 'listSchedules',
      summary: "The user's schedules, newest first",
      access: 'user',
      requestParams: { query: listQuerySchema },
      responses: { '200': jsonResponse('A page of schedules.', schedulePageSchema) },
    },
  },
  '/v1/schedules/{id}': {
    get: {
      operationId: 'getSchedule',
      summary: 'A schedule',
      access: 'user',
      requestParams: { path: scheduleId },
      responses: { '200': jsonResponse('The schedule.', scheduleSchema) },
      errors: ['not_found'],
    },
    patch: {
      operationId: 'updateSchedule',
      summary: 'Change a schedule (pause: `enabled: false`; resume: `true`, from the next tick after now)',
      access: 'user',
      requestParams: { path: scheduleId },
      jsonBody: patchScheduleSchema,
      responses: { '200': jsonResponse('The schedule.', scheduleSchema) },
      errors: ['not_found'],
    },
    delete: {
      operationId: 'deleteSchedule',
      summary: 'Delete a schedule and its runs',
      access: 'user',
      requestParams: { path: scheduleId },
      responses: { '204': { description: 'Deleted.' } },
      errors: ['not_found'],
    },
  },
  '/v1/schedules/{id}/trigger': {
    post: {
      operationId: 'triggerSchedule',
      summary: 'One run now, outside the plan',
      access: 'user',
      requestParams: { path: scheduleId },
      responses: { '201': jsonResponse('The run.', scheduleRunSchema) },
      errors: ['not_found'],
    },
  },
  '/v1/schedules/{id}/runs': {
    get: {
      operationId: 'listScheduleRuns',
      summary: "A schedule's runs, newest first",
      access: 'user',
      requestParams: { path: scheduleId, query: listQuerySchema },
      responses: { '200': jsonResponse('A page of runs.', scheduleRunPageSchema) },
      errors: ['not_found'],
    },
  },
});
