import type { Redis } from 'ioredis';
import type { Usage } from '../events/event';
import type { Metrics } from '../metrics/metrics';
import type { ConversationsRepository } from '../store/conversations-repository';
import type { Db, Queryable } from '../store/db';
import type { MessagesRepository } from '../store/messages-repository';
import type { ToolCallsRepository } from '../store/tool-calls-repository';
import type { Turn, TurnsRepository } from '../store/turns-repository';
import { InflightState } from './inflight-state';
import { repairTranscript } from './transcript-repair';
import { publishTurnCancel } from './turn-cancellations';
import { TurnEvents, type EventAppender } from './turn-events';

export interface TurnEndingDeps {
  db: Db;
  turns: TurnsRepository;
  conversations: ConversationsRepository;
  messages: MessagesRepository;
  toolCalls: ToolCallsRepository;
  eventLog: EventAppender;
  /**
   * Enqueues a turn's start (after its `retryAt`, when it waits out a provider failure), with a
   * priority from the user's unfinished turns (counted unless the caller knows the number).
   */
  enqueueTurn(turn: { id: string; userId: string; retryAt?: string | null; activeTurnsOfUser?: number }): Promise<void>;
  metrics: Pick<Metrics, 'turnsFinished' | 'turnDuration'>;
  /** For cancel signals to the workers and the turn's in-flight state. */
  redis: Redis;
  redisPrefix: string;
}

export type TurnOutcome =
  | { status: 'completed'; finishReason: string; usage: Usage }
  | { status: 'failed'; error: { code: string; message: string } }
  | { status: 'cancelled'; finishReason: 'cancelled' | 'interrupted' };

/**
 * The attempt carried by the events that announce an end imposed from outside the turn's
 * worker (a cancel, an interrupt, a job that failed for good): above any real attempt, so the
 * event fence refuses whatever a worker still on the turn emits after them, and that worker
 * stops even if it missed the cancel signal.
 */
const IMPOSED_END_ATTEMPT = 2 ** 31 - 1;

/**
 * The turn's last step, when the turn ends with it: committed in the transaction that ends the
 * turn (one commit, not two, for the common turn) and announced just before the end.
 */
export interface FinalStep {
  /** The step's writes; false when the attempt no longer owns the turn. */
  write(tx: Queryable): Promise<boolean>;
  announce(): void;
}

/**
 * Ends a turn: commits the final status (with the transcript repaired) in one transaction
 * holding the conversation's row lock, then announces it, then starts the next queued turn
 * of the conversation. `attempt` null ends it whoever runs it (cancel, a job failed for good).
 * Returns the ended turn, or null when it had ended already or the attempt was fenced off.
 */
export async function endTurn(
  deps: TurnEndingDeps,
  turn: Pick<Turn, 'id' | 'conversationId'>,
  attempt: number | null,
  outcome: TurnOutcome,
  events: TurnEvents = endingEvents(deps, turn, attempt),
  finalStep?: FinalStep,
): Promise<Turn | null> {
  const latestSeq = await events.flush();
  const result = await deps.db.transaction(async (tx) => {
    // The conversation's row is locked first, as admission does, so that the two never wait
    // on each other in turn; raising the seq floor is what locks it.
    await deps.conversations.raiseLastSeq(turn.conversationId, latestSeq, tx);
    if (finalStep && !(await finalStep.write(tx))) return null;
    const ended = await recordTurnEnd(deps, turn.id, attempt, outcome, tx);
    if (!ended) return null;
    const next = (await deps.turns.activeTurns(turn.conversationId, tx))[0];
    return { ended, next: next ?? null };
  });
  if (!result) return null;
  finalStep?.announce();
  await announceTurnEnd(deps, result.ended, attempt, outcome, events);
  if (result.next) await deps.enqueueTurn(result.next);
  return result.ended;
}

/**
 * The final status and the repaired transcript, inside the caller's transaction (which holds
 * the conversation's row lock). Null when the turn had ended or `attempt` no longer owns it.
 */
export async function recordTurnEnd(
  deps: Pick<TurnEndingDeps, 'turns' | 'toolCalls' | 'messages'>,
  turnId: string,
  attempt: number | null,
  outcome: TurnOutcome,
  tx: Queryable,
): Promise<Turn | null> {
  const ended = await deps.turns.finish(
    turnId,
    attempt,
    outcome.status === 'failed' ? { status: 'failed', error: outcome.error } : { status: outcome.status, finishReason: outcome.finishReason },
    tx,
  );
  if (!ended) return null;
  const unanswered = unansweredCallError(outcome);
  if (unanswered) await repairTranscript(deps, turnId, unanswered, tx);
  return ended;
}

/**
 * Announces a committed end: stops the workers still on the turn when the end was imposed
 * (`attempt` null), emits the final event, and drops the turn's in-flight state.
 */
export async function announceTurnEnd(
  deps: TurnEndingDeps,
  ended: Turn,
  attempt: number | null,
  outcome: TurnOutcome,
  events: TurnEvents = endingEvents(deps, ended, attempt),
): Promise<void> {
  deps.metrics.turnsFinished.inc({ status: ended.status });
  if (ended.finishedAt) deps.metrics.turnDuration.observe((Date.parse(ended.finishedAt) - Date.parse(ended.createdAt)) / 1000);
  if (attempt === null) await publishTurnCancel(deps.redis, deps.redisPrefix, ended.id);
  switch (outcome.status) {
    case 'completed':
      events.emit({ type: 'turn-finish', finishReason: outcome.finishReason, usage: outcome.usage });
      break;
    case 'failed':
      events.emit({ type: 'turn-error', error: outcome.error });
      break;
    case 'cancelled':
      events.emit({ type: 'turn-cancelled' });
      break;
  }
  const finalSeq = await events.flush();
  await Promise.all([
    deps.conversations.raiseLastSeq(ended.conversationId, finalSeq),
    // A stopped stream leaves its tool-call buffers behind; an ended turn has none.
    deps.redis.del(InflightState.keyFor(deps.redisPrefix, ended.id)),
  ]);
}

function endingEvents(deps: TurnEndingDeps, turn: Pick<Turn, 'id' | 'conversationId'>, attempt: number | null): TurnEvents {
  return new TurnEvents(deps.eventLog, turn.conversationId, turn.id, { attempt: attempt ?? IMPOSED_END_ATTEMPT });
}

/** What a call left without a result gets as its tool message, so that the history stays valid for the provider. */
function unansweredCallError(outcome: TurnOutcome): { code: string; message: string } | null {
  switch (outcome.status) {
    case 'failed':
      return { code: 'turn_failed', message: `the turn failed (${outcome.error.code}) before this call had a result` };
    case 'cancelled':
      return { code: 'cancelled', message: `the turn was ${outcome.finishReason} before this call had a result` };
    case 'completed':
      return outcome.finishReason === 'max_steps' ? { code: 'cancelled', message: 'the turn reached its maxSteps before this call ran' } : null;
  }
}
