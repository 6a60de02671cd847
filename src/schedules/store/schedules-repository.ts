import { randomUUID } from 'node:crypto';
import type { Db, Queryable } from '../../store/db';

export type Overlap = 'skip' | 'enqueue' | 'interrupt';
export type CatchUp = 'one' | 'skip';

export interface Schedule {
  id: string;
  userId: string;
  content: unknown;
  agentId: string | null;
  agentVersion: number | null;
  conversationId: string | null;
  cron: string | null;
  everyMs: number | null;
  at: Date | null;
  firstAt: Date | null;
  timezone: string;
  overlap: Overlap;
  catchUp: CatchUp;
  enabled: boolean;
  startAt: Date | null;
  endAt: Date | null;
  metadata: Record<string, unknown> | null;
  nextRunAt: Date | null;
  createdAt: Date;
  updatedAt: Date;
}

export type NewSchedule = Omit<Schedule, 'id' | 'createdAt' | 'updatedAt'>;

export interface ScheduleRun {
  runId: string;
  scheduledFor: Date;
  startedAt: Date;
  status: 'started' | 'skipped' | 'refused';
  turnId: string | null;
  conversationId: string | null;
  reason: string | null;
}

interface ScheduleRow {
  id: string;
  user_id: string;
  content: unknown;
  agent_id: string | null;
  agent_version: number | null;
  conversation_id: string | null;
  cron: string | null;
  every_ms: string | number | null;
  at: Date | null;
  first_at: Date | null;
  timezone: string;
  overlap: Overlap;
  catch_up: CatchUp;
  enabled: boolean;
  start_at: Date | null;
  end_at: Date | null;
  metadata: Record<string, unknown> | null;
  next_run_at: Date | null;
  created_at: Date;
  updated_at: Date;
  ordinal?: string | number;
}

interface RunRow {
  id: string;
  scheduled_for: Date;
  started_at: Date;
  status: ScheduleRun['status'];
  turn_id: string | null;
  conversation_id: string | null;
  reason: string | null;
  ordinal?: string | number;
}

const FIELDS = [
  'user_id',
  'content',
  'agent_id',
  'agent_version',
  'conversation_id',
  'cron',
  'every_ms',
  'at',
  'first_at',
  'timezone',
  'overlap',
  'catch_up',
  'enabled',
  'start_at',
  'end_at',
  'metadata',
  'next_run_at',
] as const;

const fieldValues = (schedule: NewSchedule): unknown[] => [
  schedule.userId,
  JSON.stringify(schedule.content),
  schedule.agentId,
  schedule.agentVersion,
  schedule.conversationId,
  schedule.cron,
  schedule.everyMs,
  schedule.at,
  schedule.firstAt,
  schedule.timezone,
  schedule.overlap,
  schedule.catchUp,
  schedule.enabled,
  schedule.startAt,
  schedule.endAt,
  schedule.metadata === null ? null : JSON.stringify(schedule.metadata),
  schedule.nextRunAt,
];

export const newRunId = (): string => `run_${randomUUID().replaceAll('-', '')}`;

/** Schedules and their runs (migrations/0041_schedules.sql). */
export class SchedulesRepository {
  constructor(
    private readonly db: Db,
    private readonly generateId: () => string = () => `sched_${randomUUID().replaceAll('-', '')}`,
  ) {}

  async create(schedule: NewSchedule): Promise<Schedule> {
    const { rows } = await this.db.query<ScheduleRow>(
      `INSERT INTO schedules (id, ${FIELDS.join(', ')}) VALUES ($1, ${FIELDS.map((_, index) => `$${index + 2}`).join(', ')}) RETURNING *`,
      [this.generateId(), ...fieldValues(schedule)],
    );
    return toSchedule(rows[0]!);
  }

  /**
   * Writes every field of `schedule` (a PATCH, a pause). `releaseClaim` (a new plan): a worker's
   * claim on the old plan's tick ends here, so that the new plan's first tick is not held behind
   * it; that worker still runs the tick it claimed (one run: the run row), and its advance, made
   * for a tick the schedule is no longer at, changes nothing.
   */
  async update(schedule: Schedule, options: { releaseClaim?: boolean } = {}, db: Queryable = this.db): Promise<Schedule> {
    const release = options.releaseClaim ? ', claimed_until = NULL' : '';
    const { rows } = await db.query<ScheduleRow>(
      `UPDATE schedules SET ${FIELDS.map((field, index) => `${field} = $${index + 2}`).join(', ')}${release}, updated_at = clock_timestamp() WHERE id = $1 RETURNING *`,
      [schedule.id, ...fieldValues(schedule)],
    );
    return toSchedule(rows[0]!);
  }

  async get(userId: string, id: string): Promise<Schedule | null> {
    const { rows } = await this.db.query<ScheduleRow>('SELECT * FROM schedules WHERE id = $1 AND user_id = $2', [id, userId]);
    return rows[0] ? toSchedule(rows[0]) : null;
  }

  async list(userId: string, page: { limit: number; before?: string }): Promise<{ data: Schedule[]; nextCursor: string | null }> {
    const { rows } = await this.db.query<ScheduleRow>(
      'SELECT * FROM schedules WHERE user_id = $1 AND ($2::bigint IS NULL OR ordinal < $2::bigint) ORDER BY ordinal DESC LIMIT $3',
      [userId, page.before ?? null, page.limit + 1],
    );
    const last = rows[page.limit - 1];
    return { data: rows.slice(0, page.limit).map(toSchedule), nextCursor: rows.length > page.limit && last ? String(last.ordinal) : null };
  }

  async delete(userId: string, id: string): Promise<boolean> {
    const { rows } = await this.db.query('DELETE FROM schedules WHERE id = $1 AND user_id = $2 RETURNING id', [id, userId]);
    return rows.length > 0;
  }

  /**
   * Claims due schedules for `leaseMs`, in one statement: workers race for due rows, a row another
   * worker is claiming is passed over (SKIP LOCKED), and a claimed one is left alone until its
   * lease ends (its worker died: the next claim takes the same tick again). The same statement
   * reads the earliest tick not yet due (`nextDueAt`, from the schedules_due index), so that a
   * worker with nothing claimed can wait for exactly that.
   */
  async claimDue(now: Date, limit: number, leaseMs: number): Promise<{ due: Schedule[]; nextDueAt: Date | null }> {
    // The outer join answers one row when nothing is claimed: its next_due, the rest null.
    const { rows } = await this.db.query<Partial<ScheduleRow> & { next_due: Date | null }>(
      `WITH claimed AS (
         UPDATE schedules SET claimed_until = $1::timestamptz + make_interval(secs => $3::double precision / 1000)
         WHERE id IN (SELECT id FROM schedules WHERE enabled AND next_run_at IS NOT NULL AND next_run_at <= $1
                        AND (claimed_until IS NULL OR claimed_until < $1)
                      ORDER BY next_run_at LIMIT $2 FOR UPDATE SKIP LOCKED)
         RETURNING *
       )
       SELECT claimed.*, (SELECT min(next_run_at) FROM schedules WHERE enabled AND next_run_at IS NOT NULL AND next_run_at > $1) AS next_due
       FROM (SELECT 1) AS one LEFT JOIN claimed ON true`,
      [now, limit, leaseMs],
    );
    return { due: rows.filter((row) => row.id !== null && row.id !== undefined).map((row) => toSchedule(row as ScheduleRow)), nextDueAt: rows[0]?.next_due ?? null };
  }

  /** Extends the claims a pass still holds, each while the schedule is at the tick it claimed (a PATCH may have moved it). */
  async renewClaims(claims: { id: string; nextRunAt: Date }[], now: Date, leaseMs: number): Promise<void> {
    // The worker's clock, as claimDue's: every claim is read and written on the same clocks.
    await this.db.query(
      `UPDATE schedules s SET claimed_until = $4::timestamptz + make_interval(secs => $3::double precision / 1000)
       FROM unnest($1::text[], $2::timestamptz[]) AS c(id, next_run_at) WHERE s.id = c.id AND s.next_run_at = c.next_run_at`,
      [claims.map((claim) => claim.id), claims.map((claim) => claim.nextRunAt), leaseMs, now],
    );
  }

  /** Moves claimed schedules on past the ticks they handled and ends their claims, in one statement; one a PATCH moved meanwhile is left as it is. */
  async advanceAll(moves: { id: string; claimedRunAt: Date; nextRunAt: Date | null }[]): Promise<void> {
    if (moves.length === 0) return;
    await this.db.query(
      `UPDATE schedules s SET next_run_at = m.next_run_at, claimed_until = NULL
       FROM unnest($1::text[], $2::timestamptz[], $3::timestamptz[]) AS m(id, claimed_run_at, next_run_at) WHERE s.id = m.id AND s.next_run_at = m.claimed_run_at`,
      [moves.map((move) => move.id), moves.map((move) => move.claimedRunAt), moves.map((move) => move.nextRunAt)],
    );
  }

  /** Records a run; false when the tick has one already (another worker, an earlier attempt). */
  async insertRun(scheduleId: string, run: Omit<ScheduleRun, 'runId' | 'startedAt'>, db: Queryable = this.db): Promise<boolean> {
    const { rows } = await db.query(
      `INSERT INTO schedule_runs (id, schedule_id, scheduled_for, status, turn_id, conversation_id, reason) VALUES ($1, $2, $3, $4, $5, $6, $7)
       ON CONFLICT (schedule_id, scheduled_for) DO NOTHING RETURNING id`,
      [newRunId(), scheduleId, run.scheduledFor, run.status, run.turnId, run.conversationId, run.reason],
    );
    return rows.length > 0;
  }

  /** Like {@link insertRun}, but a tick that has its run already is an error: it rolls back the transaction it is written in (a turn's). */
  async insertStartedRun(scheduleId: string, run: { runId: string; scheduledFor: Date; turnId: string; conversationId: string }, tx: Queryable): Promise<void> {
    await tx.query(`INSERT INTO schedule_runs (id, schedule_id, scheduled_for, status, turn_id, conversation_id) VALUES ($1, $2, $3, 'started', $4, $5)`, [
      run.runId,
      scheduleId,
      run.scheduledFor,
      run.turnId,
      run.conversationId,
    ]);
  }

  async runs(scheduleId: string, page: { limit: number; before?: string }): Promise<{ data: ScheduleRun[]; nextCursor: string | null }> {
    const { rows } = await this.db.query<RunRow>(
      'SELECT * FROM schedule_runs WHERE schedule_id = $1 AND ($2::bigint IS NULL OR ordinal < $2::bigint) ORDER BY ordinal DESC LIMIT $3',
      [scheduleId, page.before ?? null, page.limit + 1],
    );
    const last = rows[page.limit - 1];
    return { data: rows.slice(0, page.limit).map(toRun), nextCursor: rows.length > page.limit && last ? String(last.ordinal) : null };
  }

  /** Which of these ticks have their run already, in one read (a pass's). */
  async ticksWithRuns(ticks: { scheduleId: string; scheduledFor: Date }[]): Promise<{ scheduleId: string; scheduledFor: Date }[]> {
    if (ticks.length === 0) return [];
    const { rows } = await this.db.query<{ schedule_id: string; scheduled_for: Date }>(
      `SELECT r.schedule_id, r.scheduled_for FROM schedule_runs r
       JOIN unnest($1::text[], $2::timestamptz[]) AS t(schedule_id, scheduled_for) ON r.schedule_id = t.schedule_id AND r.scheduled_for = t.scheduled_for`,
      [ticks.map((tick) => tick.scheduleId), ticks.map((tick) => tick.scheduledFor)],
    );
    return rows.map((row) => ({ scheduleId: row.schedule_id, scheduledFor: row.scheduled_for }));
  }

  async runFor(scheduleId: string, scheduledFor: Date): Promise<ScheduleRun | null> {
    const { rows } = await this.db.query<RunRow>('SELECT * FROM schedule_runs WHERE schedule_id = $1 AND scheduled_for = $2', [scheduleId, scheduledFor]);
    return rows[0] ? toRun(rows[0]) : null;
  }
}

function toSchedule(row: ScheduleRow): Schedule {
  return {
    id: row.id,
    userId: row.user_id,
    content: row.content,
    agentId: row.agent_id,
    agentVersion: row.agent_version,
    conversationId: row.conversation_id,
    cron: row.cron,
    everyMs: row.every_ms === null ? null : Number(row.every_ms),
    at: row.at,
    firstAt: row.first_at,
    timezone: row.timezone,
    overlap: row.overlap,
    catchUp: row.catch_up,
    enabled: row.enabled,
    startAt: row.start_at,
    endAt: row.end_at,
    metadata: row.metadata,
    nextRunAt: row.next_run_at,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
  };
}

function toRun(row: RunRow): ScheduleRun {
  return {
    runId: row.id,
    scheduledFor: row.scheduled_for,
    startedAt: row.started_at,
    status: row.status,
    turnId: row.turn_id,
    conversationId: row.conversation_id,
    reason: row.reason,
  };
}
