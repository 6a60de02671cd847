import { randomUUID } from 'node:crypto';
import type { AssistantToolCall } from '../providers/model-provider';
import type { BatchItem, BatchItemSpec, BatchOptions } from './batch-item';
import type { Db, Queryable } from './db';
import { ACTIVE_SQL } from './turns-repository';

export type BatchStatus = 'queued' | 'running' | 'completed' | 'cancelling' | 'cancelled';
export type BatchItemStatus = 'queued' | 'running' | 'succeeded' | 'failed' | 'cancelled';

export interface BatchCounts {
  total: number;
  queued: number;
  running: number;
  /** Of the running items, those whose turn is parked on a person's approval. */
  waiting: number;
  succeeded: number;
  failed: number;
  cancelled: number;
}

export interface Batch {
  id: string;
  userId: string;
  status: BatchStatus;
  concurrency: number;
  priority: number;
  metadata: Record<string, unknown> | null;
  skipped: { line: number; message: string }[];
  counts: BatchCounts;
  /** The sum of its items' results' usage, the ledger's (migrations/0036_batch_cost.sql). */
  usage: { promptTokens: number; completionTokens: number; totalTokens: number; costUsd: number };
  createdAt: string;
  startedAt: string | null;
  finishedAt: string | null;
}

/** What the runner needs of a batch while it runs. */
export interface RunningBatch {
  id: string;
  userId: string;
  status: BatchStatus;
  concurrency: number;
  priority: number;
}

/** An ended item's result line (docs/API.md, "Results"), less what its row says. */
export interface BatchItemResult {
  text: string;
  /** The stored message `text` is (`msg_…`); absent when the last turn wrote no text. */
  messageId?: string;
  toolCalls: { toolName: string; args: unknown; result?: unknown; error?: unknown; attempts: number }[];
  /** The ledger's sum for its conversation; `costUsd` absent from results written before it was kept. */
  usage: { promptTokens: number; completionTokens: number; totalTokens: number; costUsd?: number };
  error?: { code: string; message: string };
  /** The item's last turn (what an OpenAI output line names), when it had one. */
  turnId?: string;
  finishReason?: string | null;
  /** The agent and version its last turn ran on. */
  agentId?: string;
  agentVersion?: number;
  /** Calls of the caller's own functions its last step made (an OpenAI line's `tool_calls`). */
  callerToolCalls?: AssistantToolCall[];
  /** The last turn's structured output (its responseFormat's parsed answer). */
  output?: unknown;
}

export interface BatchItemRecord {
  batchId: string;
  position: number;
  line: number;
  customId: string | null;
  spec: BatchItemSpec;
  status: BatchItemStatus;
  run: number;
  conversationId: string | null;
  messageIndex: number;
  result: BatchItemResult | null;
}

interface ItemRow {
  batch_id: string;
  position: number;
  line: number;
  custom_id: string | null;
  spec: BatchItemSpec;
  status: BatchItemStatus;
  run: number;
  conversation_id: string | null;
  message_index: number;
  result: BatchItemResult | null;
}

const OPEN_BATCH_SQL = "('queued', 'running', 'cancelling')";
/**
 * A batch's running items whose turn waits on approvals alone, read with the batch (its items
 * `b`): a turn parks and is decided without any item changing, so no counted column could
 * follow it. Costs a look at the running items only (at most the batch's concurrency).
 */
const WAITING_SQL = `(SELECT count(*)::int FROM batch_items i JOIN turns t ON t.conversation_id = i.conversation_id
   WHERE i.batch_id = b.id AND i.status = 'running' AND t.status = 'waiting_tools' AND t.awaiting = 'approvals') AS waiting`;
const EMPTY_RESULT: BatchItemResult = { text: '', toolCalls: [], usage: { promptTokens: 0, completionTokens: 0, totalTokens: 0, costUsd: 0 } };

export type CreateBatchOutcome =
  | { kind: 'created'; batch: Batch }
  /** The Idempotency-Key named a batch of the same request: that batch, never a second one. */
  | { kind: 'replayed'; batch: Batch }
  | { kind: 'conflict' };

/**
 * Its counts (columns named as in {@link BatchCounts}) and usage are kept on the row
 * (migrations/0009_batch_counts.sql), but for `waiting`, which {@link WAITING_SQL} reads.
 */
interface BatchRow extends BatchCounts {
  id: string;
  user_id: string;
  status: BatchStatus;
  concurrency: number;
  priority: number;
  metadata: Record<string, unknown> | null;
  /** bigint: text from the driver. */
  cost_usd: string;
  prompt_tokens: string;
  completion_tokens: string;
  total_tokens: string;
  skipped: { line: number; message: string }[];
  request_hash: string;
  created_at: Date;
  started_at: Date | null;
  finished_at: Date | null;
}

/**
 * Items per INSERT statement: one statement for thousands of items, bounded in count and in
 * size, so that storing a batch of any size holds one chunk in memory at a time.
 */
const INSERT_CHUNK_ITEMS = 2_000;
const INSERT_CHUNK_CHARS = 2 * 1024 * 1024;

export class BatchesRepository {
  constructor(
    private readonly db: Db,
    private readonly generateId: () => string = () => `batch_${randomUUID()}`,
  ) {}

  /**
   * The batch and every item in one transaction: it exists entirely or not at all. `items` may
   * be read as they are inserted (a submission read back from disk); they are not read at all
   * when the Idempotency-Key names a batch already.
   */
  async create(input: {
    userId: string;
    options: BatchOptions;
    items: Iterable<BatchItem> | AsyncIterable<BatchItem>;
    skipped: { line: number; message: string }[];
    idempotencyKey?: string;
    requestHash: string;
    /** Written in the batch's own transaction once it is created (an OpenAI batch's record): both or neither. */
    alongside?: (tx: Queryable, batchId: string) => Promise<void>;
  }): Promise<CreateBatchOutcome> {
    const outcome = await this.db.transaction(async (tx) => {
      const { rows } = await tx.query<{ id: string }>(
        `INSERT INTO batches (id, user_id, concurrency, priority, metadata, total, queued, skipped, idempotency_key, request_hash)
         VALUES ($1, $2, $3, $4, $5, 0, 0, $6, $7, $8)
         ON CONFLICT (user_id, idempotency_key) WHERE idempotency_key IS NOT NULL DO NOTHING RETURNING id`,
        [
          this.generateId(),
          input.userId,
          input.options.concurrency,
          input.options.priority,
          input.options.metadata === undefined ? null : JSON.stringify(input.options.metadata),
          JSON.stringify(input.skipped),
          input.idempotencyKey ?? null,
          input.requestHash,
        ],
      );
      const id = rows[0]?.id;
      if (!id) {
        const existing = await tx.query<BatchRow>('SELECT * FROM batches WHERE user_id = $1 AND idempotency_key = $2', [input.userId, input.idempotencyKey]);
        const row = existing.rows[0]!;
        return row.request_hash === input.requestHash ? { kind: 'replayed' as const, id: row.id } : { kind: 'conflict' as const };
      }
      let position = 0;
      let chunk: string[] = [];
      let chunkChars = 0;
      const insertChunk = async () => {
        if (chunk.length === 0) return;
        await tx.query(
          `INSERT INTO batch_items (batch_id, position, line, custom_id, spec)
           SELECT $1, position, line, custom_id, spec FROM jsonb_to_recordset($2::jsonb) AS r(position int, line int, custom_id text, spec jsonb)`,
          [id, `[${chunk.join(',')}]`],
        );
        chunk = [];
        chunkChars = 0;
      };
      for await (const item of input.items) {
        const row = JSON.stringify({ position: position++, line: item.line, custom_id: item.customId ?? null, spec: item.spec });
        chunk.push(row);
        chunkChars += row.length;
        if (chunk.length >= INSERT_CHUNK_ITEMS || chunkChars >= INSERT_CHUNK_CHARS) await insertChunk();
      }
      await insertChunk();
      // Items are inserted queued: the batch's row starts with queued = total (0009_batch_counts.sql).
      await tx.query('UPDATE batches SET total = $2, queued = $2 WHERE id = $1', [id, position]);
      await input.alongside?.(tx, id);
      return { kind: 'created' as const, id };
    });
    if (outcome.kind === 'conflict') return outcome;
    return { kind: outcome.kind, batch: (await this.get(input.userId, outcome.id))! };
  }

  /** Scoped to its owner: someone else's batch is indistinguishable from a missing one. */
  async get(userId: string, id: string, db: Queryable = this.db): Promise<Batch | null> {
    const { rows } = await db.query<BatchRow>(`SELECT b.*, ${WAITING_SQL} FROM batches b WHERE b.id = $1 AND b.user_id = $2`, [id, userId]);
    return rows[0] ? toBatch(rows[0]) : null;
  }

  /** Any user's batch (for followers who were checked already). */
  async getAny(id: string): Promise<Batch | null> {
    const { rows } = await this.db.query<BatchRow>(`SELECT b.*, ${WAITING_SQL} FROM batches b WHERE b.id = $1`, [id]);
    return rows[0] ? toBatch(rows[0]) : null;
  }

  /** Newest first. */
  async list(userId: string, options: { limit: number; before?: string }): Promise<{ data: Batch[]; nextBefore: string | null }> {
    const params: unknown[] = [userId, options.limit + 1];
    const before = options.before === undefined ? '' : ` AND b.ordinal < $${params.push(options.before)}`;
    const { rows } = await this.db.query<BatchRow & { ordinal: string }>(
      `SELECT b.*, ${WAITING_SQL} FROM batches b WHERE b.user_id = $1${before} ORDER BY b.ordinal DESC LIMIT $2`,
      params,
    );
    const page = rows.slice(0, options.limit);
    return { data: page.map(toBatch), nextBefore: rows.length > options.limit ? String(page[page.length - 1]!.ordinal) : null };
  }

  /** A batch the runner may act on (any user's). */
  async running(id: string, db: Queryable = this.db): Promise<RunningBatch | null> {
    const { rows } = await db.query<BatchRow>('SELECT * FROM batches WHERE id = $1', [id]);
    return rows[0] ? toRunning(rows[0]) : null;
  }

  /** A user's batches with items waiting to start, oldest first. */
  async waitingBatchIdsOfUser(userId: string): Promise<string[]> {
    const { rows } = await this.db.query<{ id: string }>(`SELECT id FROM batches WHERE user_id = $1 AND status IN ('queued', 'running') AND queued > 0 ORDER BY ordinal`, [userId]);
    return rows.map((row) => row.id);
  }

  /** Batches with items still to run or to end: what a repair pass looks at. */
  async openBatchIds(): Promise<string[]> {
    const { rows } = await this.db.query<{ id: string }>(`SELECT id FROM batches WHERE status IN ${OPEN_BATCH_SQL} ORDER BY ordinal`);
    return rows.map((row) => row.id);
  }

  /**
   * Claims queued items up to the batch's concurrency and its user's free turn slots
   * (`maxActiveTurnsPerUser`), under the batch's row lock: each claimed item is `running` in a
   * new run (a new conversation). None once the batch is cancelling.
   *
   * A running item holds one of its user's slots from its claim to its end, also while it has
   * no active turn (just claimed, or between two messages): claiming past the free slots would
   * start items whose turns the user limit refuses, which then wait for the repair pass.
   */
  async claimQueued(batchId: string, maxActiveTurnsPerUser: number): Promise<{ batch: RunningBatch; items: BatchItemRecord[] } | null> {
    return this.db.transaction(async (tx) => {
      const owner = await tx.query<{ user_id: string }>('SELECT user_id FROM batches WHERE id = $1', [batchId]);
      if (!owner.rows[0]) return null;
      // Claims of one user's batches, one at a time: two would count the same free slots.
      // NO KEY UPDATE leaves the foreign-key checks of the user's new rows unblocked.
      await tx.query('SELECT id FROM users WHERE id = $1 FOR NO KEY UPDATE', [owner.rows[0].user_id]);
      const locked = await tx.query<BatchRow>('SELECT * FROM batches WHERE id = $1 FOR UPDATE', [batchId]);
      const row = locked.rows[0];
      if (!row) return null;
      const batch = toRunning(row);
      if (batch.status !== 'queued' && batch.status !== 'running') return { batch, items: [] };
      const { rows: load } = await tx.query<{ of_batch: string; of_user: string; other_turns: string }>(
        `SELECT count(*) FILTER (WHERE i.batch_id = $1) AS of_batch, count(*) AS of_user,
                (SELECT count(*) FROM turns t WHERE t.user_id = $2 AND t.status IN ${ACTIVE_SQL}
                   AND NOT EXISTS (SELECT 1 FROM batch_items r WHERE r.conversation_id = t.conversation_id AND r.status = 'running')) AS other_turns
           FROM batch_items i JOIN batches b ON b.id = i.batch_id
          WHERE b.user_id = $2 AND b.status IN ${OPEN_BATCH_SQL} AND i.status = 'running'`,
        [batchId, batch.userId],
      );
      const { of_batch, of_user, other_turns } = load[0]!;
      const free = Math.min(batch.concurrency - Number(of_batch), maxActiveTurnsPerUser - Number(of_user) - Number(other_turns));
      if (free <= 0) return { batch, items: [] };
      const claimed = await tx.query<ItemRow>(
        `UPDATE batch_items SET status = 'running', run = run + 1, conversation_id = NULL, message_index = 0, result = NULL,
           started_at = clock_timestamp(), finished_at = NULL
         WHERE batch_id = $1 AND position IN (
           SELECT position FROM batch_items WHERE batch_id = $1 AND status = 'queued' ORDER BY position LIMIT $2)
         RETURNING *`,
        [batchId, free],
      );
      if (claimed.rows.length > 0 && batch.status === 'queued') {
        await tx.query("UPDATE batches SET status = 'running', started_at = COALESCE(started_at, clock_timestamp()) WHERE id = $1", [batchId]);
        batch.status = 'running';
      }
      return { batch, items: claimed.rows.map(toItem).sort((a, b) => a.position - b.position) };
    });
  }

  async runningItems(batchId: string): Promise<BatchItemRecord[]> {
    const { rows } = await this.db.query<ItemRow>("SELECT * FROM batch_items WHERE batch_id = $1 AND status = 'running' ORDER BY position", [batchId]);
    return rows.map(toItem);
  }

  /** The running item whose current run is this conversation. */
  async itemOfConversation(conversationId: string): Promise<BatchItemRecord | null> {
    const { rows } = await this.db.query<ItemRow>('SELECT * FROM batch_items WHERE conversation_id = $1', [conversationId]);
    return rows[0] ? toItem(rows[0]) : null;
  }

  /**
   * Moves a running item of run `run` from `fromIndex` to the user message at `toIndex` (and, on
   * its first move, to its conversation): false when another process moved it first.
   */
  async moveItem(
    item: Pick<BatchItemRecord, 'batchId' | 'position' | 'run'>,
    move: { fromIndex: number | null; toIndex: number; conversationId: string },
    tx: Queryable,
  ): Promise<boolean> {
    const { rows } = await tx.query(
      `UPDATE batch_items SET message_index = $4, conversation_id = $5
       WHERE batch_id = $1 AND position = $2 AND run = $3 AND status = 'running'
         AND ${move.fromIndex === null ? 'conversation_id IS NULL' : `message_index = ${Number(move.fromIndex)} AND conversation_id = $5`}
       RETURNING position`,
      [item.batchId, item.position, item.run, move.toIndex, move.conversationId],
    );
    return rows.length > 0;
  }

  /** Ends a running item of run `run`; false when it had ended already. */
  async finishItem(item: Pick<BatchItemRecord, 'batchId' | 'position' | 'run'>, status: 'succeeded' | 'failed' | 'cancelled', result: BatchItemResult): Promise<boolean> {
    const { rows } = await this.db.query(
      `UPDATE batch_items SET status = $4, result = $5, finished_at = clock_timestamp()
       WHERE batch_id = $1 AND position = $2 AND run = $3 AND status = 'running' RETURNING position`,
      [item.batchId, item.position, item.run, status, JSON.stringify(result)],
    );
    return rows.length > 0;
  }

  /** A batch none of whose items is queued or running has ended: completed, or cancelled. */
  async endIfDone(batchId: string): Promise<boolean> {
    const { rows } = await this.db.query(
      `UPDATE batches SET status = CASE WHEN status = 'cancelling' THEN 'cancelled' ELSE 'completed' END, finished_at = clock_timestamp()
       WHERE id = $1 AND status IN ${OPEN_BATCH_SQL} AND queued = 0 AND running = 0
       RETURNING id`,
      [batchId],
    );
    return rows.length > 0;
  }

  /**
   * Starts cancelling: queued items end as cancelled at once; running ones end as their turns
   * are cancelled. Returns the running items and how many queued ones ended, or null for a
   * batch that had ended.
   */
  async cancel(batchId: string): Promise<{ running: BatchItemRecord[]; cancelledQueued: number } | null> {
    return this.db.transaction(async (tx) => {
      const { rows } = await tx.query<{ status: BatchStatus }>('SELECT status FROM batches WHERE id = $1 FOR UPDATE', [batchId]);
      const status = rows[0]?.status;
      if (status !== 'queued' && status !== 'running' && status !== 'cancelling') return null;
      await tx.query("UPDATE batches SET status = 'cancelling' WHERE id = $1", [batchId]);
      const notStarted: BatchItemResult = { ...EMPTY_RESULT, error: { code: 'cancelled', message: 'the batch was cancelled before this item started' } };
      const cancelled = await tx.query(
        "UPDATE batch_items SET status = 'cancelled', result = $2, finished_at = clock_timestamp() WHERE batch_id = $1 AND status = 'queued' RETURNING position",
        [batchId, JSON.stringify(notStarted)],
      );
      const running = await tx.query<ItemRow>("SELECT * FROM batch_items WHERE batch_id = $1 AND status = 'running' ORDER BY position", [batchId]);
      return { running: running.rows.map(toItem), cancelledQueued: cancelled.rows.length };
    });
  }

  /** Failed items queue again (each runs in a new conversation); the batch runs again. Returns how many. */
  async requeueFailed(batchId: string): Promise<number> {
    return this.db.transaction(async (tx) => {
      const { rows } = await tx.query<{ status: BatchStatus }>('SELECT status FROM batches WHERE id = $1 FOR UPDATE', [batchId]);
      if (!rows[0] || rows[0].status === 'cancelling') return 0;
      const requeued = await tx.query("UPDATE batch_items SET status = 'queued', result = NULL, finished_at = NULL WHERE batch_id = $1 AND status = 'failed' RETURNING position", [
        batchId,
      ]);
      if (requeued.rows.length > 0) await tx.query("UPDATE batches SET status = 'running', finished_at = NULL WHERE id = $1", [batchId]);
      return requeued.rows.length;
    });
  }

  /** Ended items after position `after`, in input order: a page of the results download. */
  async endedItems(batchId: string, after: number, limit: number, db: Queryable = this.db): Promise<BatchItemRecord[]> {
    const { rows } = await db.query<ItemRow>(
      `SELECT * FROM batch_items WHERE batch_id = $1 AND position > $2 AND status IN ('succeeded', 'failed', 'cancelled')
       ORDER BY position LIMIT $3`,
      [batchId, after, limit],
    );
    return rows.map(toItem);
  }
}

function toBatch(row: BatchRow): Batch {
  return {
    ...toRunning(row),
    metadata: row.metadata,
    skipped: row.skipped,
    counts: {
      total: row.total,
      queued: row.queued,
      running: row.running,
      waiting: row.waiting,
      succeeded: row.succeeded,
      failed: row.failed,
      cancelled: row.cancelled,
    },
    usage: {
      promptTokens: Number(row.prompt_tokens),
      completionTokens: Number(row.completion_tokens),
      totalTokens: Number(row.total_tokens),
      // Rounded as the ledger's sums are: a sum of float prices carries noise below that.
      costUsd: Math.round(Number(row.cost_usd) * 1e8) / 1e8,
    },
    createdAt: row.created_at.toISOString(),
    startedAt: row.started_at?.toISOString() ?? null,
    finishedAt: row.finished_at?.toISOString() ?? null,
  };
}

function toRunning(row: BatchRow): RunningBatch {
  return { id: row.id, userId: row.user_id, status: row.status, concurrency: row.concurrency, priority: row.priority };
}

function toItem(row: ItemRow): BatchItemRecord {
  return {
    batchId: row.batch_id,
    position: row.position,
    line: row.line,
    customId: row.custom_id,
    spec: row.spec,
    status: row.status,
    run: row.run,
    conversationId: row.conversation_id,
    messageIndex: row.message_index,
    result: row.result,
  };
}
