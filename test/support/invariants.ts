import type { Queryable } from '../../src/store/db';
import { visibleStepTexts } from './client-view';

/** One execution of a tool as the tool itself saw it: its Idempotency-Key and when it began. */
export interface ToolExecution {
  idempotencyKey: string;
  at: number;
}

/**
 * The checks every fault test ends with (docs/RELIABILITY.md): every turn reached a final state;
 * each committed step of a turn has exactly one assistant message; no tool call whose result
 * was stored ran again after that, and every stored result of an HTTP tool came from an
 * execution the tool saw (`toolExecutions` is required: a test whose turns run no HTTP tool
 * says so with `[]`). With `events` (all a client received for these turns, from their start):
 * within an attempt each step finishes once, every committed step was announced finished,
 * and what a client shows of each step (after dropping discarded attempts) is exactly the
 * stored message, with no text of two attempts glued together; a cancelled turn's stopped step
 * is exactly its incomplete message (none when it showed no text).
 * Returns the turns' final statuses so a test can also check that they did not all simply fail.
 */
export async function checkInvariants(db: Queryable, input: { turnIds: string[]; toolExecutions: ToolExecution[]; events?: any[] }): Promise<Record<string, string>> {
  const statuses: Record<string, string> = {};
  for (const turnId of input.turnIds) {
    const { rows: turns } = await db.query<{ status: string; step: number }>('SELECT status, step FROM turns WHERE id = $1', [turnId]);
    const turn = turns[0];
    if (!turn) throw new Error(`turn ${turnId} does not exist`);
    if (!['completed', 'failed', 'cancelled'].includes(turn.status)) throw new Error(`turn ${turnId} is still ${turn.status}`);
    statuses[turnId] = turn.status;

    const { rows: messages } = await db.query<{ step: number; content: unknown; incomplete: boolean }>(
      `SELECT step, content, incomplete FROM messages WHERE turn_id = $1 AND role = 'assistant' ORDER BY step, id`,
      [turnId],
    );
    const assistant = messages.filter((row) => !row.incomplete);
    const expectedSteps = Array.from({ length: turn.step }, (_, i) => i + 1);
    if (JSON.stringify(assistant.map((row) => row.step)) !== JSON.stringify(expectedSteps)) {
      throw new Error(
        `turn ${turnId}: assistant messages of steps ${JSON.stringify(assistant.map((row) => row.step))}, expected one for each of steps ${JSON.stringify(expectedSteps)}`,
      );
    }
    // What a cancel kept of the step it stopped: one message after the committed ones, last.
    const incomplete = messages.filter((row) => row.incomplete);
    if (incomplete.length > 0 && (turn.status !== 'cancelled' || incomplete.length > 1 || incomplete[0]!.step !== turn.step + 1)) {
      throw new Error(`turn ${turnId} (${turn.status}, ${turn.step} steps): incomplete messages of steps ${JSON.stringify(incomplete.map((row) => row.step))}`);
    }

    await checkToolExecutions(db, turnId, input.toolExecutions);
    if (input.events) {
      const stored = new Map(assistant.map((row) => [row.step, typeof row.content === 'string' ? row.content : '']));
      const kept = incomplete[0] && { step: incomplete[0].step, text: typeof incomplete[0].content === 'string' ? incomplete[0].content : '' };
      checkEvents(
        turnId,
        input.events.filter((event) => event.turnId === turnId),
        stored,
        kept,
      );
    }
  }
  return statuses;
}

async function checkToolExecutions(db: Queryable, turnId: string, executions: ToolExecution[]): Promise<void> {
  const { rows: calls } = await db.query<{ tool_call_id: string; kind: string | null; finished_at: Date }>(
    `SELECT tool_call_id, kind, finished_at FROM tool_calls WHERE turn_id = $1 AND status = 'succeeded'`,
    [turnId],
  );
  for (const call of calls) {
    const key = `${turnId}:${call.tool_call_id}`;
    const ofCall = executions.filter((execution) => execution.idempotencyKey === key);
    if (call.kind === 'http' && ofCall.length === 0) throw new Error(`tool call ${key} has a stored result but no execution the tool saw`);
    const late = ofCall.filter((execution) => execution.at > call.finished_at.getTime());
    if (late.length > 0) throw new Error(`tool call ${key} ran ${late.length} time(s) after its result was stored`);
  }
}

function checkEvents(turnId: string, events: any[], stored: Map<number, string>, kept: { step: number; text: string } | undefined): void {
  const finished = new Set<string>();
  let attempt = 0;
  for (const event of events) {
    if (event.type === 'turn-start') attempt = event.attempt;
    if (event.type !== 'step-finish') continue;
    const key = `${attempt}/${event.step}`;
    if (finished.has(key)) throw new Error(`turn ${turnId}: step ${event.step} finished twice in attempt ${attempt}`);
    finished.add(key);
  }
  const visible = visibleStepTexts(events);
  for (const [step, text] of stored) {
    if (![...finished].some((key) => key.endsWith(`/${step}`))) throw new Error(`turn ${turnId}: committed step ${step} was never announced finished`);
    if ((visible.get(step) ?? '') !== text) {
      throw new Error(`turn ${turnId}: a client shows step ${step} as ${JSON.stringify(visible.get(step))}, stored ${JSON.stringify(text)}`);
    }
  }
  // A cancelled turn's last step: a client shows what the cancel kept of it (text streamed and none kept fails here too).
  const lastShown = [...visible.keys()].filter((step) => !stored.has(step)).at(-1);
  const shownText = lastShown === undefined ? '' : (visible.get(lastShown) ?? '');
  const endedByCancel = events.at(-1)?.type === 'turn-cancelled';
  if (endedByCancel && (shownText !== (kept?.text ?? '') || (kept && kept.step !== lastShown))) {
    throw new Error(`turn ${turnId}: a client shows the stopped step ${lastShown} as ${JSON.stringify(shownText)}, kept ${JSON.stringify(kept)}`);
  }
}
