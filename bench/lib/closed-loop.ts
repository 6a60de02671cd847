import { now, sleep } from './clock';
import type { ConversationLane } from './conversation-lane';
import type { TurnTiming, TurnTracker } from './turn-tracker';

export interface ClosedLoopResult {
  /** POST → turn-finish of every turn that finished. */
  latencies: number[];
  /** The timings of the turns that finished. */
  timings: TurnTiming[];
  failures: number;
  firstFailure?: string;
  /** From the start until the last turn in flight at the deadline ended. */
  elapsedMs: number;
}

/**
 * Keeps one turn in flight per lane until `durationMs` has passed: each lane posts its next
 * turn as soon as its previous one finished (lanes never share a conversation: one turn at a
 * time per conversation is Switchyard's rule). Turns still running at the deadline are waited
 * for and counted; the loop is also bounded by `maxTurns`. Making a lane's next conversation
 * (every few turns) is part of the elapsed time, not of any turn's latency.
 *
 * With `turnsPerSecond`, the n-th turn is not posted before `n ÷ turnsPerSecond` s from the
 * start: an open loop at that rate for as long as the lanes keep up (they wait for their slot
 * instead of posting back to back).
 */
export async function runClosedLoop(input: {
  tracker: TurnTracker;
  lanes: ConversationLane[];
  content: string;
  durationMs: number;
  maxTurns?: number;
  turnsPerSecond?: number;
}): Promise<ClosedLoopResult> {
  const startedAt = now();
  const deadline = startedAt + input.durationMs;
  const maxTurns = input.maxTurns ?? Number.POSITIVE_INFINITY;
  const latencies: number[] = [];
  const timings: TurnTiming[] = [];
  let started = 0;
  let failures = 0;
  let firstFailure: string | undefined;
  await Promise.all(
    input.lanes.map(async (lane) => {
      while (now() < deadline && started < maxTurns) {
        const slotAt = input.turnsPerSecond === undefined ? startedAt : startedAt + (started * 1000) / input.turnsPerSecond;
        if (slotAt >= deadline) break;
        started++;
        if (slotAt > now()) await sleep(slotAt - now());
        try {
          const conversationId = await lane.next();
          const timing = await input.tracker.runTurn(lane.api, conversationId, input.content, 30_000);
          if (timing.endType === 'turn-finish') {
            latencies.push(timing.endedAt! - timing.postedAt);
            timings.push(timing);
          } else {
            failures++;
            firstFailure ??= `a turn ended with ${timing.endType}`;
          }
        } catch (error) {
          failures++;
          firstFailure ??= (error as Error).message;
          // Many failures mean a broken service, not a slow one: stop rather than spin.
          if (failures > 100) throw new Error(`more than 100 turns failed; first: ${firstFailure}`);
        }
      }
    }),
  );
  return { latencies, timings, failures, ...(firstFailure ? { firstFailure } : {}), elapsedMs: now() - startedAt };
}
