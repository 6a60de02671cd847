import type { Queryable } from '../../src/store/db';

/** One execution of a tool as the tool itself saw it: its Idempotency-Key and when it began. */
export interface ToolExecution {
  idempotencyKey: string;
  at: number;
}

/**
 * The three checks every fault test ends with (RELIABILITY.md): every turn reached a final
 * state; each committed step of a turn has exactly one assistant message; and no tool call
 * whose result was stored ran again after that. Returns the turns' final statuses so a test
 * can also check that they did not all simply fail.
 */
export async function checkInvariants(
  db: Queryable,
  input: { turnIds: string[]; toolExecutions?: ToolExecution[] },
): Promise<Record<string, string>> {
  const statuses: Record<string, string> = {};
  for (const turnId of input.turnIds) {
    const { rows: turns } = await db.query<{ status: string; step: number }>('SELECT status, step FROM turns WHERE id = $1', [turnId]);
    const turn = turns[0];
    if (!turn) throw new Error(`turn ${turnId} does not exist`);
    if (!['completed', 'failed', 'cancelled'].includes(turn.status)) throw new Error(`turn ${turnId} is still ${turn.status}`);
    statuses[turnId] = turn.status;

    const { rows: perStep } = await db.query<{ step: number; count: string | number }>(
      `SELECT step, count(*) AS count FROM messages WHERE turn_id = $1 AND role = 'assistant' GROUP BY step ORDER BY step`,
      [turnId],
    );
    const expectedSteps = Array.from({ length: turn.step }, (_, i) => i + 1);
    const steps = perStep.map((row) => row.step);
    if (JSON.stringify(steps) !== JSON.stringify(expectedSteps) || perStep.some((row) => Number(row.count) !== 1)) {
      throw new Error(`turn ${turnId}: assistant messages per step ${JSON.stringify(perStep)}, expected one for each of steps ${JSON.stringify(expectedSteps)}`);
    }

    const { rows: calls } = await db.query<{ tool_call_id: string; finished_at: Date }>(
      `SELECT tool_call_id, finished_at FROM tool_calls WHERE turn_id = $1 AND status = 'succeeded'`,
      [turnId],
    );
    for (const call of calls) {
      const key = `${turnId}:${call.tool_call_id}`;
      const late = (input.toolExecutions ?? []).filter((execution) => execution.idempotencyKey === key && execution.at > call.finished_at.getTime());
      if (late.length > 0) throw new Error(`tool call ${key} ran ${late.length} time(s) after its result was stored`);
    }
  }
  return statuses;
}
