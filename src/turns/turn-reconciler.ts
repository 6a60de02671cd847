import type { Queue } from 'bullmq';
import type { Redis } from 'ioredis';
import type { Logger } from 'pino';
import { clientTimeoutJobId, continuationJobId } from '../queue/tool-queue';
import { resumeJobId, turnJobId } from '../queue/turn-queue';
import type { ToolCallsRepository } from '../store/tool-calls-repository';
import type { Turn, TurnsRepository } from '../store/turns-repository';
import { decideReconcile, type ObservedJob } from './reconcile-decision';
import { endTurn, type TurnEndingDeps } from './turn-ending';

export interface ReconcilerDeps extends TurnEndingDeps {
  turns: TurnsRepository;
  toolCalls: ToolCallsRepository;
  turnQueue: Queue;
  toolQueue: Queue;
  /** For the lock that keeps several workers from scanning at the same moment. */
  redis: Redis;
  redisPrefix: string;
  logger: Logger;
}

const PAGE = 200;

/**
 * PostgreSQL is the source of truth for which turns must run; Redis may lose jobs (a restart
 * without its data, a crash between a commit and an enqueue). One pass re-enqueues every
 * unfinished turn that is first in its conversation and has no job that would move it on.
 * Job ids are deterministic, so a pass that races a normal enqueue adds nothing twice.
 */
export async function reconcileTurns(deps: ReconcilerDeps): Promise<{ checked: number; enqueued: number; retried: number; failed: number }> {
  const counts = { checked: 0, enqueued: 0, retried: 0, failed: 0 };
  for (let after = '0'; ; ) {
    const page = await deps.turns.runnable(after, PAGE);
    for (const turn of page.turns) {
      counts.checked++;
      const action = decideReconcile(turn, await observeJobs(deps, turn));
      if (action.kind === 'enqueue') {
        // No live job runs it: whichever job held it is gone, so the new one may take it.
        if (turn.status === 'running') await deps.turns.releaseRunningJob(turn.id, turn.runningJob);
        await deps.enqueueTurn(turn);
        counts.enqueued++;
      } else if (action.kind === 'retry') {
        const job = await deps.turnQueue.getJob(action.jobId);
        await job?.retry('failed', { resetAttemptsMade: true, resetAttemptsStarted: true });
        counts.retried++;
      } else if (action.kind === 'fail') {
        await endTurn(deps, turn, null, { status: 'failed', error: action.error });
        counts.failed++;
      }
    }
    if (!page.lastOrdinal || page.turns.length < PAGE) return counts;
    after = page.lastOrdinal;
  }
}

async function observeJobs(deps: ReconcilerDeps, turn: Turn): Promise<{ turnJobs: ObservedJob[]; clientTimeouts: ObservedJob[] }> {
  const observe = async (queue: Queue, id: string): Promise<ObservedJob> => {
    const state = await queue.getJobState(id);
    if (state !== 'failed') return { id, state };
    const job = await queue.getJob(id);
    return { id, state, ...(job?.failedReason ? { failedReason: job.failedReason } : {}) };
  };
  const turnJobIds = [turnJobId(turn.id), continuationJobId(turn.id, turn.step), resumeJobId(turn.id, turn.step)];
  const turnJobs = await Promise.all(turnJobIds.map((id) => observe(deps.turnQueue, id)));
  if (turn.awaiting !== 'clients') return { turnJobs, clientTimeouts: [] };
  const unanswered = (await deps.toolCalls.listForStep(turn.id, turn.step)).filter(
    (call) => call.kind === 'client' && (call.status === 'pending' || call.status === 'running'),
  );
  const clientTimeouts = await Promise.all(
    unanswered.map((call) => observe(deps.toolQueue, clientTimeoutJobId(turn.id, call.step, call.position))),
  );
  return { turnJobs, clientTimeouts };
}

/**
 * Runs a pass at start and every `intervalMs`. Several workers may run this; a short Redis
 * lock lets one of them scan per interval (a second scan would only be wasted work).
 */
export function startReconciler(deps: ReconcilerDeps, intervalMs: number): { stop(): Promise<void> } {
  const lockKey = `${deps.redisPrefix}:reconciler-lock`;
  let running: Promise<void> = Promise.resolve();
  let stopped = false;
  const pass = async () => {
    try {
      const locked = await deps.redis.set(lockKey, String(process.pid), 'PX', Math.max(1000, Math.floor(intervalMs / 2)), 'NX');
      if (!locked) return;
      const counts = await reconcileTurns(deps);
      if (counts.enqueued > 0 || counts.retried > 0 || counts.failed > 0) deps.logger.info(counts, 'reconciler repaired turns');
    } catch (error) {
      deps.logger.warn({ err: error }, 'reconciler pass failed; trying again later');
    }
  };
  const tick = () => {
    if (!stopped) running = running.then(pass);
  };
  tick();
  const timer = setInterval(tick, intervalMs);
  timer.unref();
  return {
    async stop() {
      stopped = true;
      clearInterval(timer);
      await running;
    },
  };
}
