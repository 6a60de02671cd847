import { attemptFields, START_ATTEMPT, outcomeColumns, UNSETTLED, type AttemptFields, type AttemptRow, type AttemptStatus, type Outcome } from './attempt-columns';
import type { Queryable } from './db';
import { dateFromJson } from './json-rows';
import { toStorableJson } from '../storable/storable-text';
import { CoalescedStatements } from './coalesced-statements';

/** `awaiting_approval`: a person has not decided the call yet; no tool job picks it up. */
export type ToolCallStatus = AttemptStatus | 'awaiting_approval';
export const SETTLED_TOOL_CALL_STATUSES: readonly ToolCallStatus[] = ['succeeded', 'failed', 'cancelled'];
/** Not settled yet, the calls that wait for a decision included (a cancel settles those too). */
const OPEN = `('pending', 'running', 'awaiting_approval')`;

export interface ToolCallRecord extends Omit<AttemptFields, 'status'> {
  status: ToolCallStatus;
  /** The call's approval (tool_approvals) when it needed a person's; null otherwise. */
  approvalId: string | null;
  turnId: string;
  toolCallId: string;
  conversationId: string;
  step: number;
  position: number;
  name: string;
  kind: string | null;
  argumentsText: string;
  args: unknown;
}

export type NewToolCall = Pick<ToolCallRecord, 'turnId' | 'toolCallId' | 'conversationId' | 'step' | 'position' | 'name' | 'kind' | 'argumentsText' | 'args'> &
  /** A call rejected before running (invalid arguments) is stored already settled. */
  (
    | { status: 'pending' }
    /** Waits for a person's decision until `expiresAt` (an ISO time). */
    | { status: 'awaiting_approval'; approval: { approvalId: string; expiresAt: string } }
    | { status: 'failed' | 'cancelled'; error: { code: string; message: string } }
  );

/** A step's calls, and whether its tool messages are written (its tool phase completed). */
export interface StepState {
  calls: ToolCallRecord[];
  toolMessagesWritten: boolean;
  /** The statement that read the step wrote its tool messages (every call had its outcome). */
  toolMessagesWrittenHere?: boolean;
}

interface ToolCallRow extends Omit<AttemptRow, 'status'> {
  status: ToolCallStatus;
  approval_id: string | null;
  turn_id: string;
  tool_call_id: string;
  conversation_id: string;
  step: number;
  position: number;
  name: string;
  kind: string | null;
  arguments_text: string;
  args: unknown;
}

type CallKey = { turnId: string; toolCallId: string };
const keyOf = (row: { turn_id: string; tool_call_id: string }) => `${row.turn_id}\n${row.tool_call_id}`;

export class ToolCallsRepository {
  /** The tool jobs' starts and outcomes, each request a row of a shared statement (see CoalescedStatements). */
  private readonly starts = new CoalescedStatements<CallKey, ToolCallRecord | null>((keys) => this.markRunningMany(keys));
  private readonly outcomes = new CoalescedStatements<CallKey & { outcome: Outcome }, ToolCallRecord | null>((settlements) => this.settleMany(settlements));

  constructor(private readonly db: Queryable) {}

  /** One statement for the step's calls. Idempotent: a step committed twice (a retried commit) keeps its first rows. */
  async insertMany(calls: NewToolCall[], db: Queryable = this.db): Promise<void> {
    if (calls.length === 0) return;
    const records = calls.map((call) => ({
      turn_id: call.turnId,
      tool_call_id: call.toolCallId,
      conversation_id: call.conversationId,
      step: call.step,
      position: call.position,
      name: call.name,
      kind: call.kind,
      arguments_text: call.argumentsText,
      // Absent (SQL NULL) when the arguments did not parse.
      args: call.args,
      status: call.status,
      error: 'error' in call ? call.error : undefined,
      message: 'error' in call ? toolMessageContent(call) : undefined,
      approval_id: 'approval' in call ? call.approval.approvalId : undefined,
    }));
    await db.query(
      `INSERT INTO tool_calls (turn_id, tool_call_id, conversation_id, step, position, name, kind, arguments_text, args, status, error, message, finished_at, approval_id)
       SELECT turn_id, tool_call_id, conversation_id, step, position, name, kind, arguments_text, args, status, error, message,
              CASE WHEN message IS NULL THEN NULL ELSE clock_timestamp() END, approval_id
       FROM jsonb_to_recordset($1::jsonb) AS r(turn_id text, tool_call_id text, conversation_id text, step int, position int,
            name text, kind text, arguments_text text, args jsonb, status text, error jsonb, message text, approval_id text)
       ORDER BY position
       ON CONFLICT (turn_id, tool_call_id) DO NOTHING`,
      [JSON.stringify(records)],
    );
  }

  async get(turnId: string, toolCallId: string, db: Queryable = this.db): Promise<ToolCallRecord | null> {
    const { rows } = await db.query<ToolCallRow>('SELECT * FROM tool_calls WHERE turn_id = $1 AND tool_call_id = $2', [turnId, toolCallId]);
    return rows[0] ? toRecord(rows[0]) : null;
  }

  async listForTurn(turnId: string, db: Queryable = this.db): Promise<ToolCallRecord[]> {
    const { rows } = await db.query<ToolCallRow>('SELECT * FROM tool_calls WHERE turn_id = $1 ORDER BY step, position', [turnId]);
    return rows.map(toRecord);
  }

  /** The calls of these turns, each turn's in step and position order. */
  async listForTurns(turnIds: string[], db: Queryable = this.db): Promise<ToolCallRecord[]> {
    if (turnIds.length === 0) return [];
    const { rows } = await db.query<ToolCallRow>('SELECT * FROM tool_calls WHERE turn_id = ANY($1::text[]) ORDER BY turn_id, step, position', [turnIds]);
    return rows.map(toRecord);
  }

  async listForStep(turnId: string, step: number, db: Queryable = this.db): Promise<ToolCallRecord[]> {
    const { rows } = await db.query<ToolCallRow>('SELECT * FROM tool_calls WHERE turn_id = $1 AND step = $2 ORDER BY position', [turnId, step]);
    return rows.map(toRecord);
  }

  /** A step's state in one query. */
  async stepState(turnId: string, step: number): Promise<StepState> {
    const { rows } = await this.db.query<ToolCallRow & { tool_messages_written: boolean }>(
      `SELECT c.*, EXISTS (SELECT 1 FROM messages m WHERE m.turn_id = $1 AND m.step = $2 AND m.role = 'tool') AS tool_messages_written
       FROM tool_calls c WHERE c.turn_id = $1 AND c.step = $2 ORDER BY c.position`,
      [turnId, step],
    );
    return { calls: rows.map(toRecord), toolMessagesWritten: rows[0]?.tool_messages_written ?? false };
  }

  /**
   * The calls of each parked (turn, step) that something outside the turn settles: unanswered
   * client calls, and calls that need approval (undecided, or approved and not settled yet), in
   * one query.
   */
  async unsettledParkedCalls(steps: { turnId: string; step: number }[]): Promise<Pick<ToolCallRecord, 'turnId' | 'step' | 'position' | 'kind' | 'status' | 'approvalId'>[]> {
    if (steps.length === 0) return [];
    const { rows } = await this.db.query<{ turn_id: string; step: number; position: number; kind: string | null; status: ToolCallStatus; approval_id: string | null }>(
      `SELECT c.turn_id, c.step, c.position, c.kind, c.status, c.approval_id FROM tool_calls c
       JOIN unnest($1::text[], $2::int[]) AS s(turn_id, step) ON c.turn_id = s.turn_id AND c.step = s.step
       WHERE (c.kind = 'client' OR c.approval_id IS NOT NULL) AND c.status IN ${OPEN} ORDER BY c.turn_id, c.position`,
      [steps.map((each) => each.turnId), steps.map((each) => each.step)],
    );
    return rows.map((row) => ({ turnId: row.turn_id, step: row.step, position: row.position, kind: row.kind, status: row.status, approvalId: row.approval_id }));
  }

  /** An approved call may run: pending again, with the arguments it runs with. False when it no longer waits. */
  async release(turnId: string, toolCallId: string, args: unknown, db: Queryable = this.db): Promise<boolean> {
    const { rows } = await db.query(`UPDATE tool_calls SET status = 'pending', args = $3 WHERE turn_id = $1 AND tool_call_id = $2 AND status = 'awaiting_approval' RETURNING 1`, [
      turnId,
      toolCallId,
      JSON.stringify(args ?? null),
    ]);
    return rows.length > 0;
  }

  /**
   * Counts an execution attempt. Null when the call is settled: it must not run again. The
   * starts of calls made at about the same time share one statement.
   */
  markRunning(turnId: string, toolCallId: string): Promise<ToolCallRecord | null> {
    return this.starts.run({ turnId, toolCallId });
  }

  /**
   * {@link markRunning} for many calls in one statement, answered in the order asked. A call
   * asked twice in one statement is started once: the first asker gets it, the second null. A
   * call a local tool slot holds is not started (see {@link claimForSlots}, {@link takeOver}).
   */
  async markRunningMany(keys: CallKey[]): Promise<(ToolCallRecord | null)[]> {
    const { rows } = await this.db.query<ToolCallRow>(
      `UPDATE tool_calls SET ${START_ATTEMPT}
       FROM unnest($1::text[], $2::text[]) AS k(turn_id, tool_call_id)
       WHERE tool_calls.turn_id = k.turn_id AND tool_calls.tool_call_id = k.tool_call_id AND tool_calls.status IN ${UNSETTLED}
         AND tool_calls.held_by IS NULL
       RETURNING tool_calls.*`,
      [keys.map((key) => key.turnId), keys.map((key) => key.toolCallId)],
    );
    return answerOnce(keys, rows);
  }

  /**
   * The local tool slot's holder the call was claimed by (see {@link claimForSlots}), and whether
   * the call is settled since; null when no slot claimed it, or it was given back.
   */
  async holderOf(turnId: string, toolCallId: string): Promise<{ holder: string; settled: boolean } | null> {
    const { rows } = await this.db.query<{ held_by: string; unsettled: boolean }>(
      `SELECT held_by, status IN ${UNSETTLED} AS unsettled FROM tool_calls WHERE turn_id = $1 AND tool_call_id = $2 AND held_by IS NOT NULL`,
      [turnId, toolCallId],
    );
    return rows[0] ? { holder: rows[0].held_by, settled: !rows[0].unsettled } : null;
  }

  /** A held call whose holder is gone, started by its queued job (the attempt counted). Null when another took it first or it is settled. */
  async takeOver(turnId: string, toolCallId: string, holder: string): Promise<ToolCallRecord | null> {
    const { rows } = await this.db.query<ToolCallRow>(
      `UPDATE tool_calls SET ${START_ATTEMPT}, held_by = NULL WHERE turn_id = $1 AND tool_call_id = $2 AND status IN ${UNSETTLED} AND held_by = $3 RETURNING *`,
      [turnId, toolCallId, holder],
    );
    return rows[0] ? toRecord(rows[0]) : null;
  }

  /**
   * A step's pending calls claimed by a worker's local tool slots, their starts in one
   * statement: each counted as an attempt and held by `holder` (the lock key of the turn job
   * running the step), so that the call's queued job leaves it alone while that lock lasts.
   */
  async claimForSlots(turnId: string, toolCallIds: string[], holder: string): Promise<ToolCallRecord[]> {
    const { rows } = await this.db.query<ToolCallRow>(
      `UPDATE tool_calls SET ${START_ATTEMPT}, held_by = $3 WHERE turn_id = $1 AND tool_call_id = ANY($2::text[]) AND status = 'pending' RETURNING *`,
      [turnId, toolCallIds, holder],
    );
    return rows.map(toRecord);
  }

  /** Another attempt of a call `holder` still holds (a retry), counted. Null when it no longer holds it. */
  async restartHeld(turnId: string, toolCallId: string, holder: string): Promise<ToolCallRecord | null> {
    const { rows } = await this.db.query<ToolCallRow>(
      `UPDATE tool_calls SET ${START_ATTEMPT} WHERE turn_id = $1 AND tool_call_id = $2 AND status = 'running' AND held_by = $3 RETURNING *`,
      [turnId, toolCallId, holder],
    );
    return rows[0] ? toRecord(rows[0]) : null;
  }

  /** Gives the calls back to their queued jobs at once (a local slot stopped before their outcome). */
  async releaseHolds(turnId: string, toolCallIds: string[], holder: string): Promise<void> {
    await this.db.query(`UPDATE tool_calls SET held_by = NULL WHERE turn_id = $1 AND tool_call_id = ANY($2::text[]) AND held_by = $3`, [turnId, toolCallIds, holder]);
  }

  /**
   * A tool job's outcome: {@link settle}, the outcomes of calls settled at about the same time
   * sharing one statement. Each caller announces its outcome only after this returns it.
   */
  settleAttempt(turnId: string, toolCallId: string, outcome: Outcome): Promise<ToolCallRecord | null> {
    return this.outcomes.run({ turnId, toolCallId, outcome });
  }

  /** {@link settle} (without `attempts`) for many calls in one statement, answered in the order asked. */
  async settleMany(settlements: (CallKey & { outcome: Outcome })[]): Promise<(ToolCallRecord | null)[]> {
    const records = settlements.map(({ turnId, toolCallId, outcome }) => {
      const [result, error] = outcomeColumns(outcome);
      return { turn_id: turnId, tool_call_id: toolCallId, status: outcome.status, result, error, message: toolMessageContent(outcome) };
    });
    // result and error travel as JSON text, parsed by PostgreSQL as the single-call settle's are.
    const { rows } = await this.db.query<ToolCallRow>(
      `UPDATE tool_calls SET status = r.status, result = r.result::jsonb, error = r.error::jsonb, message = r.message, finished_at = clock_timestamp()
       FROM jsonb_to_recordset($1::jsonb) AS r(turn_id text, tool_call_id text, status text, result text, error text, message text)
       WHERE tool_calls.turn_id = r.turn_id AND tool_calls.tool_call_id = r.tool_call_id
         AND (tool_calls.status IN ${UNSETTLED}
              OR (tool_calls.status = 'awaiting_approval' AND r.status = 'failed' AND r.error::jsonb->>'code' IN ('denied', 'approval_timeout')))
       RETURNING tool_calls.*`,
      [JSON.stringify(records)],
    );
    return answerOnce(settlements, rows);
  }

  /**
   * Stores the outcome unless one is stored already: the first answer wins. `attempts` is given
   * for a call no worker ran (a client tool's answer: 1, its timeout: 0), so that the stored call
   * says what its `tool-result` said.
   */
  async settle(turnId: string, toolCallId: string, outcome: Outcome & { attempts?: number }, db: Queryable = this.db): Promise<ToolCallRecord | null> {
    // A call awaiting approval is settled only by its denial (or a cancel), never by a tool job.
    const { rows } = await db.query<ToolCallRow>(
      `UPDATE tool_calls SET status = $3, result = $4, error = $5, message = $6, finished_at = clock_timestamp(), attempts = COALESCE($7::int, attempts)
       WHERE turn_id = $1 AND tool_call_id = $2 AND (status IN ${UNSETTLED} OR (status = 'awaiting_approval' AND $3 = 'failed' AND $5::jsonb->>'code' IN ('denied', 'approval_timeout')))
       RETURNING *`,
      [turnId, toolCallId, outcome.status, ...outcomeColumns(outcome), toolMessageContent(outcome), outcome.attempts ?? null],
    );
    return rows[0] ? toRecord(rows[0]) : null;
  }

  /** Settles every unsettled call of a turn as cancelled (cancel, interrupt, max steps). */
  async cancelUnsettled(turnId: string, error: { code: string; message: string }, db: Queryable = this.db): Promise<ToolCallRecord[]> {
    const { rows } = await db.query<ToolCallRow>(
      `UPDATE tool_calls SET status = 'cancelled', error = $2, message = $3, finished_at = clock_timestamp()
       WHERE turn_id = $1 AND status IN ${OPEN} RETURNING *`,
      [turnId, JSON.stringify(error), toolMessageContent({ status: 'cancelled', error })],
    );
    return rows.map(toRecord);
  }
}

/**
 * The `tool` message the model receives for a settled call: the result as JSON text (a string
 * result as it is), or `{"error": {code, message}}`, so the model can read a failure and try
 * again. Stored with the outcome (`message`), so that SQL writes a step's tool messages.
 */
export function toolMessageContent(outcome: Outcome): string {
  if (outcome.status === 'succeeded') {
    const result = toStorableJson(outcome.result ?? null);
    return typeof result === 'string' ? result : JSON.stringify(result);
  }
  const { code, message } = toStorableJson(outcome.error) as typeof outcome.error;
  return JSON.stringify({ error: { code, message } });
}

/** Each key's row, to its first asker only (a row changed once answers once). */
function answerOnce(keys: CallKey[], rows: ToolCallRow[]): (ToolCallRecord | null)[] {
  const byKey = new Map(rows.map((row) => [keyOf(row), row]));
  return keys.map((key) => {
    const k = keyOf({ turn_id: key.turnId, tool_call_id: key.toolCallId });
    const row = byKey.get(k);
    byKey.delete(k);
    return row ? toRecord(row) : null;
  });
}

export function durationMs(call: ToolCallRecord): number {
  if (!call.startedAt || !call.finishedAt) return 0;
  return Math.max(0, Date.parse(call.finishedAt) - Date.parse(call.startedAt));
}

/** A tool call row as `json_agg` writes it: its timestamps are text. */
export type JsonToolCallRow = Omit<ToolCallRow, 'created_at' | 'started_at' | 'finished_at'> & Record<'created_at' | 'started_at' | 'finished_at', string | null>;

export function toolCallFromJson(row: JsonToolCallRow): ToolCallRecord {
  return toRecord({ ...row, created_at: new Date(row.created_at!), started_at: dateFromJson(row.started_at), finished_at: dateFromJson(row.finished_at) });
}

function toRecord(row: ToolCallRow): ToolCallRecord {
  return {
    turnId: row.turn_id,
    toolCallId: row.tool_call_id,
    conversationId: row.conversation_id,
    step: row.step,
    position: row.position,
    name: row.name,
    kind: row.kind,
    argumentsText: row.arguments_text,
    args: row.args,
    approvalId: row.approval_id ?? null,
    ...attemptFields(row as AttemptRow),
    status: row.status,
  };
}
