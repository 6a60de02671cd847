import type { Queue } from 'bullmq';
import { turnJobId } from '../queue/turn-queue';
import type { BudgetSubject, Turn, TurnsRepository } from '../store/turns-repository';

export interface BudgetWakeUpDeps {
  turns: Pick<TurnsRepository, 'releaseBudgetWaits'>;
  turnQueue: Queue;
  batchTurnQueue: Queue;
}

/**
 * A budget raised, removed or made `reject`: the user's (or key's) turns parked for it run now rather than
 * at their period's reset. Each one's delayed job is promoted; the job checks the budget again
 * and parks again if it is still reached. A job not delayed (being parked at this moment, or lost
 * with Redis) is left to its own re-check (BUDGET_RECHECK_MS) or to the reconciler, which finds
 * the turn with no wait left (`retry_at` cleared here).
 */
export async function wakeBudgetWaiters(deps: BudgetWakeUpDeps, subject: BudgetSubject): Promise<number> {
  const parked = await deps.turns.releaseBudgetWaits(subject);
  let woken = 0;
  for (const turn of parked) {
    if (!turn.runningJob) continue;
    const job = await queueOf(deps, turn, turn.runningJob).getJob(turn.runningJob);
    try {
      await job?.promote();
      if (job) woken++;
    } catch {
      // Not delayed (any more): it runs, or its re-check will.
    }
  }
  return woken;
}

/** A batch item's turn starts on the batch queue; every continuation runs on the interactive one. */
function queueOf(deps: BudgetWakeUpDeps, turn: Turn, jobId: string): Queue {
  return turn.batchPriority !== null && jobId === turnJobId(turn.id) ? deps.batchTurnQueue : deps.turnQueue;
}
