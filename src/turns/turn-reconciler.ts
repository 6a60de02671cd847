import type { Queue } from 'bullmq';
import type { RedisClient } from '../redis/redis-connection';
import type { Logger } from 'pino';
import { observeJobs, type ObservedJob } from '../queue/job-states';
import { approvalTimeoutJobId, clientTimeoutJobId, continuationJobId, toolJobId } from '../queue/tool-queue';
import { resumeJobId, turnJobId } from '../queue/turn-queue';
import type { ToolCallsRepository } from '../store/tool-calls-repository';
import type { Turn, TurnsRepository } from '../store/turns-repository';
import { startPeriodicPass } from '../timers/periodic-pass';
import { decideReconcile } from './reconcile-decision';
import { endTurn, type TurnEndingDeps } from './turn-ending';

export interface ReconcilerDeps extends TurnEndingDeps {
  turns: TurnsRepository;
  toolCalls: ToolCallsRepository;
  turnQueue: Queue;
  batchTurnQueue: Queue;
  toolQueue: Queue;
  /** Job states are read on it, and the lock that lets one worker scan at a time is kept there. */
  redis: RedisClient;
  redisPrefix: string;
  logger: Logger;
}

export interface ReconcileCounts {
  checked: number;
  enqueued: number;
  retried: number;
  failed: number;
}

/** Turns read from PostgreSQL, and their jobs read from Redis, per round trip. */
const PAGE = 200;

/**
 * PostgreSQL is the source of truth for which turns must run; Redis may lose jobs (a restart
 * without its data, a crash between a commit and an enqueue). A pass re-enqueues the unfinished
 * turns that are first in their conversation and have no job that would move them on, from
 * `after` (a turn ordinal) on, checking at most `maxTurns`: per page of turns one query and
 * one Redis round trip. Job ids are deterministic, so a pass that races a normal enqueue adds
 * nothing twice. `next` is where the following pass goes on (null: it starts over).
 */
export async function reconcileTurns(
  deps: ReconcilerDeps,
  options: { after?: string; maxTurns: number; shouldStop?: () => boolean },
): Promise<ReconcileCounts & { next: string | null }> {
  const counts = { checked: 0, enqueued: 0, retried: 0, failed: 0 };
  let after = options.after ?? '0';
  while (counts.checked < options.maxTurns && !options.shouldStop?.()) {
    const limit = Math.min(PAGE, options.maxTurns - counts.checked);
    const page = await deps.turns.runnable(after, limit);
    const observed = await observePage(deps, page.turns);
    for (const turn of page.turns) {
      counts.checked++;
      const action = decideReconcile(turn, observed.get(turn.id)!);
      if (action.kind === 'enqueue') {
        // No live job runs it: whichever job held it is gone, so the new one may take it.
        if (turn.status === 'running') await deps.turns.releaseRunningJob(turn.id, turn.runningJob);
        await deps.enqueueTurn(turn);
        counts.enqueued++;
      } else if (action.kind === 'retry') {
        const job = await jobQueue(deps, turn, action.jobId).getJob(action.jobId);
        await job?.retry('failed', { resetAttemptsMade: true, resetAttemptsStarted: true });
        counts.retried++;
      } else if (action.kind === 'fail') {
        await endTurn(deps, turn, null, { status: 'failed', error: action.error });
        counts.failed++;
      }
    }
    if (!page.lastOrdinal || page.turns.length < limit) return { ...counts, next: null };
    after = page.lastOrdinal;
  }
  return { ...counts, next: after };
}

/**
 * Every job that could move each turn on (its start, its step's continuation, its client-answer
 * resume, the timeouts of its unanswered client tools), for a page of turns: one query for the
 * unanswered client calls, one Redis round trip for the jobs.
 */
async function observePage(deps: ReconcilerDeps, turns: Turn[]): Promise<Map<string, { turnJobs: ObservedJob[]; clientTimeouts: ObservedJob[] }>> {
  const parked = turns.filter((turn) => turn.awaiting === 'clients' || turn.awaiting === 'approvals');
  const unanswered = await deps.toolCalls.unsettledParkedCalls(parked.map((turn) => ({ turnId: turn.id, step: turn.step })));
  const refs: { turnId: string; kind: 'turn' | 'client'; queue: Queue; id: string }[] = turns.flatMap((turn) =>
    [turnJobId(turn.id), continuationJobId(turn.id, turn.step), resumeJobId(turn.id, turn.step)].map((id) => ({
      turnId: turn.id,
      kind: 'turn' as const,
      queue: jobQueue(deps, turn, id),
      id,
    })),
  );
  for (const call of unanswered) {
    refs.push({ turnId: call.turnId, kind: 'client', queue: deps.toolQueue, id: parkedCallJobId(call) });
  }
  const states = await observeJobs(deps.redis, refs);
  const byTurn = new Map(turns.map((turn) => [turn.id, { turnJobs: [] as ObservedJob[], clientTimeouts: [] as ObservedJob[] }]));
  refs.forEach((ref, index) => {
    const jobs = byTurn.get(ref.turnId)!;
    (ref.kind === 'turn' ? jobs.turnJobs : jobs.clientTimeouts).push(states[index]!);
  });
  return byTurn;
}

/** A batch item's turn starts on the batch queue; every continuation runs on the interactive one. */
function jobQueue(deps: ReconcilerDeps, turn: Turn, jobId: string): Queue {
  return turn.batchPriority !== null && jobId === turnJobId(turn.id) ? deps.batchTurnQueue : deps.turnQueue;
}

/** Renews the lock only while it is still this holder's (its token). */
const RENEW_IF_HELD = `if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('PEXPIRE', KEYS[1], ARGV[2]) end return 0`;

/**
 * Runs a pass at start and `intervalMs` after each pass. Several workers run this; a Redis lock lets one
 * of them scan per interval, held (renewed) for as long as its pass takes, so that two passes
 * never overlap, and left to expire after it. A pass checks at most `maxTurnsPerPass` turns and
 * the next pass, on whichever worker, goes on from there (the cursor is kept in Redis), so a
 * backlog of N turns is through in ceil(N / maxTurnsPerPass) intervals.
 */
export function startReconciler(
  deps: ReconcilerDeps,
  options: { intervalMs: number; maxTurnsPerPass: number; onPass?: (counts: ReconcileCounts) => void },
): { stop(): Promise<void> } {
  const lockKey = `${deps.redisPrefix}:reconciler-lock`;
  const cursorKey = `${deps.redisPrefix}:reconciler-cursor`;
  const lockMs = Math.max(1000, Math.floor(options.intervalMs / 2));
  const token = `${process.pid}:${Math.random().toString(36).slice(2)}`;
  let stopped = false;
  const pass = async () => {
    let renewal: NodeJS.Timeout | undefined;
    try {
      const locked = await deps.redis.set(lockKey, token, 'PX', lockMs, 'NX');
      if (!locked) return;
      let lost = false;
      renewal = setInterval(() => {
        deps.redis.eval(RENEW_IF_HELD, 1, lockKey, token, lockMs).then(
          (renewed) => {
            if (renewed !== 1) lost = true;
          },
          () => {
            lost = true;
          },
        );
      }, lockMs / 3);
      const after = (await deps.redis.get(cursorKey)) ?? undefined;
      const { next, ...counts } = await reconcileTurns(deps, { after, maxTurns: options.maxTurnsPerPass, shouldStop: () => lost || stopped });
      if (!lost) await (next ? deps.redis.set(cursorKey, next) : deps.redis.del(cursorKey));
      options.onPass?.(counts);
      if (counts.enqueued > 0 || counts.retried > 0 || counts.failed > 0) deps.logger.info(counts, 'reconciler repaired turns');
    } finally {
      clearInterval(renewal);
    }
  };
  const periodic = startPeriodicPass(pass, {
    intervalMs: options.intervalMs,
    atStart: true,
    onError: (error) => deps.logger.warn({ err: error }, 'reconciler pass failed; trying again later'),
  });
  return {
    async stop() {
      stopped = true;
      await periodic.stop();
    },
  };
}

/** The job that settles a parked call, or moves it on: its expiry while undecided, its run once approved, a client's timeout. */
function parkedCallJobId(call: { turnId: string; step: number; position: number; kind: string | null; status: string; approvalId: string | null }): string {
  if (call.status === 'awaiting_approval') return approvalTimeoutJobId(call.turnId, call.step, call.position);
  if (call.kind !== 'client') return toolJobId(call.turnId, call.step, call.position);
  return clientTimeoutJobId(call.turnId, call.step, call.position);
}
