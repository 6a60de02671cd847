import type { Logger } from 'pino';
import type { Metrics } from '../metrics/metrics';
import type { BatchItemRecord, BatchItemResult, BatchesRepository, RunningBatch } from '../store/batches-repository';
import type { ConversationsRepository } from '../store/conversations-repository';
import type { Db } from '../store/db';
import type { MessagesRepository } from '../store/messages-repository';
import type { UsageLedgerRepository } from '../usage/store/usage-ledger-repository';
import type { ToolCallsRepository } from '../store/tool-calls-repository';
import { isTerminal, type Turn, type TurnsRepository } from '../store/turns-repository';
import type { TurnService } from '../turns/turn-service';
import { storedAgentReference } from '../agents/agent-reference';
import { itemResult } from './batch-item-result';
import { contextBefore, nextUserMessage } from './batch-messages';

export interface BatchRunnerDeps {
  db: Db;
  batches: BatchesRepository;
  conversations: Pick<ConversationsRepository, 'findOrCreateByExternalId'>;
  messages: Pick<MessagesRepository, 'insertContext' | 'list'>;
  turns: Pick<TurnsRepository, 'listForConversation'>;
  toolCalls: Pick<ToolCallsRepository, 'listForTurn'>;
  /** An item's usage: its conversation's sum in the usage ledger. */
  ledger: Pick<UsageLedgerRepository, 'forConversation'>;
  turnService: Pick<TurnService, 'create' | 'cancel'>;
  metrics: Pick<Metrics, 'batchItemsStarted' | 'batchItemsEnded'>;
  /** MAX_ACTIVE_TURNS_PER_USER: a batch claims no more items than its user has free turn slots. */
  maxActiveTurnsPerUser: number;
  /** Announces that the batch changed (its followers read it again). */
  notify(batchId: string): void;
  logger: Logger;
}

/**
 * Runs batches on the turn machinery. Every step is idempotent and keyed in PostgreSQL (an
 * item's run is its own conversation, each user message a turn with an idempotency key), so
 * whichever process acts, and however often, an item runs each message once; a process that
 * dies between two steps leaves work that `repair` finishes.
 */
export class BatchRunner {
  constructor(private readonly deps: BatchRunnerDeps) {}

  /** Starts queued items up to the batch's concurrency and its user's free turn slots; ends the batch when nothing is left. */
  async pump(batchId: string): Promise<void> {
    const claim = await this.deps.batches.claimQueued(batchId, this.deps.maxActiveTurnsPerUser);
    if (!claim) return;
    this.deps.metrics.batchItemsStarted.inc(claim.items.length);
    await Promise.all(
      claim.items.map((item) =>
        this.start(claim.batch, item).catch((error: unknown) =>
          this.deps.logger.warn({ err: error, batchId, position: item.position }, 'batch item did not start; the repair pass retries'),
        ),
      ),
    );
    await this.deps.batches.endIfDone(batchId);
    this.deps.notify(batchId);
  }

  /**
   * Called when any turn ends: moves a batch item on to its next message, or ends it. The turn
   * freed one of its user's slots, so the user's batches that wait for one go on too.
   */
  async turnEnded(turn: Turn): Promise<void> {
    const batchId = turn.batchPriority === null ? null : await this.moveOn(turn);
    if (batchId) await this.pump(batchId);
    for (const waiting of await this.deps.batches.waitingBatchIdsOfUser(turn.userId)) if (waiting !== batchId) await this.pump(waiting);
  }

  /** The batch item of a batch turn that ended, moved on; returns its batch's id. */
  private async moveOn(turn: Turn): Promise<string | null> {
    const item = await this.deps.batches.itemOfConversation(turn.conversationId);
    if (!item || item.status !== 'running') return null;
    const batch = await this.deps.batches.running(item.batchId);
    if (!batch) return null;
    await this.advance(batch, item, turn);
    return batch.id;
  }

  /** Cancels a batch: what has not started never starts, running items' turns are cancelled. */
  async cancel(batch: Pick<RunningBatch, 'id' | 'userId'>): Promise<void> {
    const cancelling = await this.deps.batches.cancel(batch.id);
    if (cancelling) this.deps.metrics.batchItemsEnded.inc({ status: 'cancelled' }, cancelling.cancelledQueued);
    const running = cancelling?.running ?? [];
    // Read after the mark, so that an item moved on here starts no further message.
    const marked = running.length > 0 ? await this.deps.batches.running(batch.id) : null;
    if (marked) for (const item of running) await this.cancelItem(marked, item);
    await this.deps.batches.endIfDone(batch.id);
    this.deps.notify(batch.id);
  }

  /**
   * A running item of a cancelling batch. Its active turn is cancelled, and that turn's end
   * ends the item (turnEnded). A turn of its that has ended may not have moved the item on yet
   * (its worker records that after the turn's end is committed): the item ends here with that
   * turn's result, as the worker would have ended it, so an ended turn's result is never lost.
   * An item whose current message has no turn yet ends cancelled, with what its earlier turns gave.
   */
  private async cancelItem(batch: RunningBatch, item: BatchItemRecord): Promise<void> {
    if (!item.conversationId) return this.finish(item, 'cancelled', { ...EMPTY_RESULT, error: CANCELLED });
    const turns = await this.deps.turns.listForConversation(item.conversationId);
    const last = turns[turns.length - 1];
    if (last && !isTerminal(last.status)) {
      await this.deps.turnService.cancel(batch.userId, last.id);
      return;
    }
    if (last && turns.length > userMessagesBefore(item)) return this.advance(batch, item, last);
    // post() finds the batch cancelling and cancels the turn it makes.
    const result = last ? await this.result(item.conversationId, last) : EMPTY_RESULT;
    await this.finish(item, 'cancelled', { ...result, error: CANCELLED });
  }

  /** Runs the failed items again, each in a new conversation. Returns how many. */
  async retry(batchId: string): Promise<number> {
    const requeued = await this.deps.batches.requeueFailed(batchId);
    if (requeued > 0) await this.pump(batchId);
    return requeued;
  }

  /**
   * Finishes what a process that died left half-done: running items with no conversation or no
   * turn yet, and items whose last turn ended without moving them on; then fills free slots.
   */
  async repair(): Promise<void> {
    for (const batchId of await this.deps.batches.openBatchIds()) {
      const batch = await this.deps.batches.running(batchId);
      if (!batch) continue;
      for (const item of await this.deps.batches.runningItems(batchId)) {
        try {
          if (!item.conversationId) {
            await this.start(batch, item);
            continue;
          }
          const turns = await this.deps.turns.listForConversation(item.conversationId);
          const last = turns[turns.length - 1];
          if (!last || turns.length <= userMessagesBefore(item)) await this.post(batch, item, item.conversationId);
          else if (isTerminal(last.status)) await this.advance(batch, item, last);
        } catch (error) {
          this.deps.logger.warn({ err: error, batchId, position: item.position }, 'batch item repair failed; the next pass retries');
        }
      }
      await this.pump(batchId);
    }
  }

  /** An item's run: its own conversation (made once), the context before its first user message, and that message's turn. */
  private async start(batch: RunningBatch, item: BatchItemRecord): Promise<void> {
    const { spec } = item;
    const first = nextUserMessage(spec.messages, 0);
    const conversation = await this.deps.conversations.findOrCreateByExternalId(batch.userId, `batch:${batch.id}:${item.position}:${item.run}`, {
      title: item.customId ?? `batch item ${item.position}`,
      source: 'batch',
      ...(spec.system !== undefined ? { system: spec.system } : {}),
      ...(spec.model !== undefined ? { model: spec.model } : {}),
      ...(spec.tools !== undefined ? { tools: spec.tools } : {}),
      ...(spec.requireApproval !== undefined ? { requireApproval: spec.requireApproval } : {}),
      ...(spec.agent !== undefined ? { agent: storedAgentReference(spec.agent) } : {}),
      metadata: { ...spec.metadata, batchId: batch.id, position: item.position, ...(item.customId ? { customId: item.customId } : {}) },
      batchId: batch.id,
    });
    const moved = await this.deps.db.transaction(async (tx) => {
      if (!(await this.deps.batches.moveItem(item, { fromIndex: null, toIndex: first, conversationId: conversation.id }, tx))) return false;
      await this.deps.messages.insertContext(conversation.id, contextBefore(spec.messages, 0, first), tx);
      return true;
    });
    if (moved) await this.post(batch, { ...item, conversationId: conversation.id, messageIndex: first }, conversation.id);
  }

  /** The turn for the item's current user message; the same key makes a repeat the same turn. */
  private async post(batch: RunningBatch, item: BatchItemRecord, conversationId: string): Promise<void> {
    const { spec } = item;
    const message = spec.messages[item.messageIndex]!;
    const { turn } = await this.deps.turnService.create(batch.userId, conversationId, {
      content: typeof message === 'object' && !Array.isArray(message) ? message.content : message,
      idempotencyKey: `batch-message:${item.messageIndex}`,
      onBusy: 'reject',
      options: {
        ...(spec.model !== undefined ? { model: spec.model } : {}),
        ...(spec.tools !== undefined ? { tools: spec.tools } : {}),
        ...(spec.toolChoice !== undefined ? { toolChoice: spec.toolChoice } : {}),
        ...(spec.maxSteps !== undefined ? { maxSteps: spec.maxSteps } : {}),
        ...(spec.modelSettings !== undefined ? { modelSettings: spec.modelSettings } : {}),
        ...(spec.responseFormat !== undefined ? { responseFormat: spec.responseFormat } : {}),
        ...(spec.functions !== undefined ? { functions: spec.functions } : {}),
      },
      batchPriority: batch.priority,
    });
    // A cancel marks the batch first, then cancels the turns it finds: one that looked before
    // this turn existed is seen here, and the turn is cancelled instead of run.
    const now = await this.deps.batches.running(batch.id);
    if ((now?.status === 'cancelling' || now?.status === 'cancelled') && !isTerminal(turn.status)) await this.deps.turnService.cancel(batch.userId, turn.id);
  }

  /** After the turn of the item's current message: its next message, or its end. */
  private async advance(batch: RunningBatch, item: BatchItemRecord, turn: Turn): Promise<void> {
    const conversationId = item.conversationId!;
    // A cancelling batch starts no further message.
    const goesOn = turn.status === 'completed' && batch.status !== 'cancelling';
    const next = goesOn ? nextUserMessage(item.spec.messages, item.messageIndex + 1) : -1;
    if (next !== -1) {
      const moved = await this.deps.db.transaction(async (tx) => {
        if (!(await this.deps.batches.moveItem(item, { fromIndex: item.messageIndex, toIndex: next, conversationId }, tx))) return false;
        await this.deps.messages.insertContext(conversationId, contextBefore(item.spec.messages, item.messageIndex + 1, next), tx);
        return true;
      });
      if (moved) await this.post(batch, { ...item, messageIndex: next }, conversationId);
      return;
    }
    const result = await this.result(conversationId, turn);
    const unfinished = turn.status === 'completed' && nextUserMessage(item.spec.messages, item.messageIndex + 1) !== -1;
    if (unfinished) return this.finish(item, 'cancelled', { ...result, error: CANCELLED });
    const status = turn.status === 'completed' ? 'succeeded' : turn.status === 'failed' ? 'failed' : 'cancelled';
    await this.finish(item, status, result);
  }

  /** Ends a running item (counted once, by whichever process ended it). */
  private async finish(item: BatchItemRecord, status: 'succeeded' | 'failed' | 'cancelled', result: BatchItemResult): Promise<void> {
    if (await this.deps.batches.finishItem(item, status, result)) this.deps.metrics.batchItemsEnded.inc({ status });
  }

  private async result(conversationId: string, last: Turn): Promise<BatchItemResult> {
    const [turns, messages, usage] = await Promise.all([
      this.deps.turns.listForConversation(conversationId),
      this.deps.messages.list(conversationId),
      this.deps.ledger.forConversation(conversationId),
    ]);
    const calls = (await Promise.all(turns.map((turn) => this.deps.toolCalls.listForTurn(turn.id)))).flat();
    return itemResult({ last, messages, calls, usage });
  }
}

const EMPTY_RESULT: BatchItemResult = { text: '', toolCalls: [], usage: { promptTokens: 0, completionTokens: 0, totalTokens: 0, costUsd: 0 } };
const CANCELLED = { code: 'cancelled', message: 'the batch was cancelled' };

/** How many turns an item has posted once its current message's turn exists. */
function userMessagesBefore(item: BatchItemRecord): number {
  let count = 0;
  for (let index = 0; index < item.messageIndex; index++) {
    const message = item.spec.messages[index]!;
    if (typeof message !== 'object' || Array.isArray(message) || message.role === 'user') count++;
  }
  return count;
}
