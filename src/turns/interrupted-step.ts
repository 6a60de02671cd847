import { eventSchema, type SwitchyardEvent } from '../events/event';
import type { LoggedEvent } from '../event-log/event-log';
import type { ConversationsRepository } from '../store/conversations-repository';
import type { Queryable } from '../store/db';
import type { MessagesRepository } from '../store/messages-repository';
import type { Turn } from '../store/turns-repository';
import { uncommittedStepOutput } from './uncommitted-step-output';

/** The event log as the end of a turn imposed from outside reads what the turn's step had streamed. */
export interface StreamedOutputLog {
  /** Refuses every later event of the turn's attempts below `attempt`. */
  fenceAttemptsBelow(conversationId: string, turnId: string, attempt: number): Promise<void>;
  /** The conversation's events after `afterSeq`, oldest first, a page at a time. */
  readNow(conversationId: string, afterSeq: number): Promise<{ events: LoggedEvent[] }>;
}

export interface InterruptedStepDeps {
  eventLog: StreamedOutputLog;
  conversations: Pick<ConversationsRepository, 'getById'>;
  messages: Pick<MessagesRepository, 'insertIncompleteMessage'>;
}

/**
 * Keeps what the running step of a turn cancelled or interrupted from outside had streamed, as
 * the turn's last assistant message, marked incomplete (docs/API.md, "HTTP API"). Runs in the
 * transaction that ends the turn, after the turn's row was updated: no attempt begins and no
 * step commits until it is over, and the message is written with the end or not at all, once.
 * The text is the event log's, so it is what clients were shown, whether the worker that
 * streamed it is still on the turn, stopped, or SIGKILLed long ago:
 * 1. Fence the turn's attempts: what a worker still on it appends from now on is refused (and
 *    stops it), so the log holds all that its clients will have seen of the step.
 * 2. Read the turn's events after the conversation's seq floor, which a step's commit raises:
 *    the events of a step not committed all come after it.
 * 3. Fold them as a client does; the step shown last, if it was not committed and streamed
 *    text or reasoning, is stored.
 */
export async function keepInterruptedStep(deps: InterruptedStepDeps, ended: Pick<Turn, 'id' | 'conversationId' | 'attempt' | 'step'>, tx: Queryable): Promise<void> {
  // A turn no worker began streamed nothing (a batch cancel ends many such).
  if (ended.attempt === 0) return;
  await deps.eventLog.fenceAttemptsBelow(ended.conversationId, ended.id, ended.attempt + 1);
  const floor = (await deps.conversations.getById(ended.conversationId, tx))?.lastSeq ?? 0;
  const output = uncommittedStepOutput(await turnEventsAfter(deps.eventLog, ended, floor), ended.step);
  if (output) await deps.messages.insertIncompleteMessage({ conversationId: ended.conversationId, turnId: ended.id, ...output }, tx);
}

async function turnEventsAfter(log: StreamedOutputLog, turn: Pick<Turn, 'id' | 'conversationId'>, afterSeq: number): Promise<SwitchyardEvent[]> {
  const marker = `"turnId":${JSON.stringify(turn.id)}`;
  const events: SwitchyardEvent[] = [];
  for (let after = afterSeq; ;) {
    const page = await log.readNow(turn.conversationId, after);
    if (page.events.length === 0) return events;
    for (const logged of page.events) {
      if (!logged.json.includes(marker)) continue;
      const event = eventSchema.parse(JSON.parse(logged.json)) as SwitchyardEvent;
      if (event.turnId === turn.id) events.push(event);
    }
    after = page.events[page.events.length - 1]!.seq;
  }
}
