import { z } from 'zod';
import { turnContentSchema } from '../events/turn-content';
import { cronProblem, isTimeZone } from './schedule-plan';

/** `"90s"`, `"15m"`, `"2h"`: at least 10 s. */
const EVERY = /^([1-9]\d{0,8})(s|m|h)$/;
const UNIT_MS = { s: 1000, m: 60_000, h: 3_600_000 } as const;
export const MIN_EVERY_MS = 10_000;

/** An interval's milliseconds, or null when it is not one. Pure. */
export function everyMs(text: string): number | null {
  const match = EVERY.exec(text);
  return match ? Number(match[1]) * UNIT_MS[match[2] as keyof typeof UNIT_MS] : null;
}

/** Milliseconds as the shortest of `h`, `m`, `s`. Pure. */
export function formatEvery(ms: number): string {
  if (ms % UNIT_MS.h === 0) return `${ms / UNIT_MS.h}h`;
  if (ms % UNIT_MS.m === 0) return `${ms / UNIT_MS.m}m`;
  return `${ms / 1000}s`;
}

const time = z.iso.datetime({ offset: true }).transform((text) => new Date(text));

const fields = {
  content: turnContentSchema,
  agent: z.string().min(1).max(120).optional().meta({ description: 'The agent each run uses (`agent_…`, its name, `@N` to pin).' }),
  conversationId: z.string().min(1).max(100).optional().meta({ description: 'Each run a turn of this conversation; absent: each run a new conversation.' }),
  cron: z.string().min(1).max(200).optional().meta({ description: 'Five fields, in `timezone`.' }),
  every: z
    .string()
    .optional()
    .refine((text) => text === undefined || (everyMs(text) ?? 0) >= MIN_EVERY_MS, '"90s", "15m" or "2h", at least 10s')
    .meta({ description: '`90s`, `15m`, `2h`: the first tick at `startAt`, else one interval after the schedule is made.' }),
  at: time.optional().meta({ description: 'One time (ISO 8601).' }),
  timezone: z.string().min(1).max(100).default('UTC').refine(isTimeZone, 'an IANA time zone name (Europe/Paris)'),
  overlap: z.enum(['skip', 'enqueue', 'interrupt']).default('skip'),
  catchUp: z.enum(['one', 'skip']).default('one'),
  enabled: z.boolean().default(true),
  startAt: time.optional(),
  endAt: time.optional(),
  metadata: z.record(z.string(), z.unknown()).optional(),
};

/** `POST /v1/schedules`. */
export const createScheduleSchema = z
  .strictObject(fields)
  .superRefine((body, context) => {
    const plans = [body.cron, body.every, body.at].filter((plan) => plan !== undefined).length;
    if (plans !== 1) context.addIssue({ code: 'custom', path: ['cron'], message: 'exactly one of cron, every or at' });
    const problem = body.cron !== undefined ? cronProblem(body.cron, body.timezone) : null;
    if (problem) context.addIssue({ code: 'custom', path: ['cron'], message: problem });
  })
  .meta({ id: 'ScheduleCreate' });
export type CreateScheduleRequest = z.infer<typeof createScheduleSchema>;

/**
 * `PATCH /v1/schedules/:id`: what it changes (a pause is `{enabled: false}`). A plan given
 * (`cron`, `every` or `at`) replaces the schedule's; with `timezone` or `startAt` alone the
 * schedule keeps its kind of plan.
 */
export const patchScheduleSchema = z
  .strictObject({
    content: z.optional(turnContentSchema),
    cron: fields.cron,
    every: fields.every,
    at: fields.at,
    timezone: z.string().min(1).max(100).refine(isTimeZone, 'an IANA time zone name (Europe/Paris)').optional(),
    startAt: time.nullable().optional(),
    overlap: z.enum(['skip', 'enqueue', 'interrupt']).optional(),
    catchUp: z.enum(['one', 'skip']).optional(),
    enabled: z.boolean().optional(),
    endAt: time.nullable().optional(),
    metadata: z.record(z.string(), z.unknown()).nullable().optional(),
  })
  .superRefine((body, context) => {
    const plans = [body.cron, body.every, body.at].filter((plan) => plan !== undefined).length;
    if (plans > 1) context.addIssue({ code: 'custom', path: ['cron'], message: 'at most one of cron, every or at' });
  })
  .meta({ id: 'SchedulePatch' });
export type PatchScheduleRequest = z.infer<typeof patchScheduleSchema>;
