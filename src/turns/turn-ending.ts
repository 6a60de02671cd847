import type { RedisClient } from '../redis/redis-connection';
import type { EventPayload, Usage } from '../events/event';
import type { Metrics } from '../metrics/metrics';
import type { ConversationsRepository } from '../store/conversations-repository';
import type { Db, Queryable } from '../store/db';
import type { MessagesRepository } from '../store/messages-repository';
import type { ToolCallsRepository } from '../store/tool-calls-repository';
import { TurnEndAnnouncedError } from '../event-log/event-log';
import { isTerminal, type NextTurn, type Turn, type TurnsRepository } from '../store/turns-repository';
import { repairTranscript } from './transcript-repair';
import { publishTurnCancel } from '../queue/turn-cancellations';
import { TurnEvents, type EventAppender } from '../event-log/turn-events';
import { keepInterruptedStep, type StreamedOutputLog } from './interrupted-step';

export interface TurnEndingDeps {
  db: Db;
  turns: TurnsRepository;
  conversations: ConversationsRepository;
  messages: MessagesRepository;
  toolCalls: ToolCallsRepository;
  /** Appends the turn's events; a cancel also reads what its running step had streamed. */
  eventLog: EventAppender & StreamedOutputLog;
  /**
   * Enqueues a turn's start (after its `retryAt`, when it waits out a provider failure), with a
   * priority from the user's unfinished turns (counted unless the caller knows the number).
   */
  enqueueTurn(turn: {
    id: string;
    userId: string;
    conversationId?: string;
    retryAt?: string | null;
    activeTurnsOfUser?: number;
    batchPriority?: number | null;
    /** The trace the turn's job joins (the turn row's). */
    traceparent?: string | null;
  }): Promise<void>;
  metrics: Pick<Metrics, 'turnsFinished' | 'turnDuration' | 'turnSteps'>;
  /** For cancel signals to the workers. */
  redis: RedisClient;
  redisPrefix: string;
  /** After a turn's end is committed and announced (a batch item moves on). */
  onTurnEnded?(turn: Turn): Promise<void>;
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
 * turn (one commit, not two, for the common turn) and announced with the end.
 */
export interface FinalStep {
  /** The step's writes; false when the attempt no longer owns the turn. */
  write(tx: Queryable): Promise<boolean>;
  /** Its `step-finish`, the first of the events that announce the end. */
  finishEvent: EventPayload;
  /**
   * For a completed turn whose last step called no tools: the seq floor, the step, the end and
   * the next turn's read in one round trip instead of the transaction (see TurnsRepository).
   */
  completeWithEnd?(endEvents: EventPayload[], seenSeq: number): Promise<{ ended: Turn; next: NextTurn | null } | null>;
}

/**
 * Ends a turn: commits the final status (with the transcript repaired and the events that
 * announce it) in one transaction holding the conversation's row lock, then announces it, then
 * starts the next queued turn of the conversation. `attempt` null ends it whoever runs it
 * (cancel, a job failed for good). Returns the ended turn, or null when it had ended already
 * or the attempt was fenced off.
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
  const result =
    finalStep?.completeWithEnd && outcome.status === 'completed'
      ? await finalStep.completeWithEnd([finalStep.finishEvent, endEvent(outcome)], latestSeq)
      : await deps.db.transaction(async (tx) => {
          // The conversation's row is locked first, as admission does, so that the two never
          // wait on each other in turn; raising the seq floor is what locks it.
          await deps.conversations.raiseLastSeq(turn.conversationId, latestSeq, tx);
          if (finalStep && !(await finalStep.write(tx))) return null;
          const ended = await recordTurnEnd(deps, turn.id, attempt, outcome, tx, finalStep?.finishEvent);
          if (!ended) return null;
          const next = (await deps.turns.activeTurns(turn.conversationId, tx))[0];
          return { ended, next: next ?? null };
        });
  if (!result) return null;
  await announceTurnEnd(deps, result.ended, attempt, events);
  await startNext(deps, result.ended, result.next);
  return result.ended;
}

/**
 * For a job whose turn has ended: the worker that committed the end may have died before
 * announcing it (its subscribers would wait for ever), starting the conversation's next turn,
 * or moving its batch on. Announces the stored end, at most once whoever tries, and when this
 * call announced it, does the rest. Returns whether it announced.
 */
export async function announceStoredEnd(deps: TurnEndingDeps, turnId: string): Promise<boolean> {
  const turn = await deps.turns.get(turnId);
  if (!turn || !isTerminal(turn.status) || !turn.endEvents) return false;
  // As an imposed end: a worker still on the turn is stale, and stops.
  if (!(await announceTurnEnd(deps, turn, null))) return false;
  await startNext(deps, turn, (await deps.turns.activeTurns(turn.conversationId))[0] ?? null);
  return true;
}

async function startNext(deps: TurnEndingDeps, ended: Turn, next: NextTurn | null): Promise<void> {
  if (next) await deps.enqueueTurn(next);
  await deps.onTurnEnded?.(ended);
}

/**
 * The final status and the repaired transcript, inside the caller's transaction (which holds
 * the conversation's row lock); for a cancel or an interrupt, also what its running step had
 * streamed, as an incomplete message after the rest. Null when the turn had ended or `attempt`
 * no longer owns it.
 */
export async function recordTurnEnd(
  deps: Pick<TurnEndingDeps, 'turns' | 'toolCalls' | 'messages' | 'eventLog' | 'conversations'>,
  turnId: string,
  attempt: number | null,
  outcome: TurnOutcome,
  tx: Queryable,
  finalStepFinish?: EventPayload,
): Promise<Turn | null> {
  const ended = await deps.turns.finish(
    turnId,
    attempt,
    outcome.status === 'failed' ? { status: 'failed', error: outcome.error } : { status: outcome.status, finishReason: outcome.finishReason },
    [...(finalStepFinish ? [finalStepFinish] : []), endEvent(outcome)],
    tx,
  );
  if (!ended) return null;
  const unanswered = unansweredCallError(outcome);
  if (unanswered) await repairTranscript(deps, turnId, unanswered, tx);
  if (attempt === null && outcome.status === 'cancelled') await keepInterruptedStep(deps, ended, tx);
  return ended;
}

/**
 * Announces a committed end: stops the workers still on the turn when the end was imposed
 * (`attempt` null), appends the events stored with the end in one batch, and drops the turn's
 * in-flight state. Returns false when the end had been announced already (the log takes a
 * turn's end once).
 */
export async function announceTurnEnd(deps: TurnEndingDeps, ended: Turn, attempt: number | null, events: TurnEvents = endingEvents(deps, ended, attempt)): Promise<boolean> {
  if (attempt === null) await publishTurnCancel(deps.redis, deps.redisPrefix, ended.id);
  // A stopped stream leaves its tool-call buffers behind; an ended turn has none.
  events.clearInflight();
  events.emit(...(ended.endEvents ?? []));
  let finalSeq: number | null;
  try {
    finalSeq = await events.flush();
  } catch (error) {
    if (!TurnEndAnnouncedError.isInstance(error)) throw error;
    finalSeq = null;
  }
  if (finalSeq !== null) {
    deps.metrics.turnsFinished.inc({ status: ended.status });
    if (ended.finishedAt) deps.metrics.turnDuration.observe((Date.parse(ended.finishedAt) - Date.parse(ended.createdAt)) / 1000);
    deps.metrics.turnSteps.observe(ended.step);
  }
  if (finalSeq !== null) await deps.conversations.raiseLastSeq(ended.conversationId, finalSeq);
  return finalSeq !== null;
}

/** The event that announces an outcome. */
function endEvent(outcome: TurnOutcome): EventPayload {
  switch (outcome.status) {
    case 'completed':
      return { type: 'turn-finish', finishReason: outcome.finishReason, usage: outcome.usage };
    case 'failed':
      return { type: 'turn-error', error: outcome.error };
    case 'cancelled':
      return { type: 'turn-cancelled' };
  }
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
