import type { Usage } from '../events/event';
import type { Queryable } from './db';
import { formatMessageId } from './message-id';

/** A summary standing in for a conversation's messages up to one of them (docs/API.md, "Long conversations"). */
export interface Compaction {
  id: string;
  conversationId: string;
  turnId: string;
  /** The step it was made before. */
  step: number;
  /** The row id of the last message it covers. */
  upToRowId: string;
  summary: string;
  tokensBefore: number;
  tokensAfter: number;
  model: string;
  usage: Usage;
  createdAt: string;
}

export type NewCompaction = Omit<Compaction, 'createdAt'>;

interface CompactionRow {
  id: string;
  conversation_id: string;
  turn_id: string;
  step: number;
  up_to_message_id: string | number;
  summary: string;
  tokens_before: number;
  tokens_after: number;
  model: string;
  usage: Usage;
  created_at: Date;
}

export class CompactionsRepository {
  constructor(private readonly db: Queryable) {}

  /**
   * Stores a compaction if its turn is still this attempt's and its step has none yet: a stale
   * worker's, or a second one of a step, is not written. False when nothing was.
   */
  async insert(compaction: NewCompaction, attempt: number, db: Queryable = this.db): Promise<boolean> {
    const { rows } = await db.query(
      `INSERT INTO compactions (id, conversation_id, turn_id, step, up_to_message_id, summary, tokens_before, tokens_after, model, usage)
       SELECT $1, $2, $3, $4, $5, $6, $7, $8, $9, $10 FROM turns WHERE id = $3 AND attempt = $11 AND status = 'running'
       ON CONFLICT (turn_id, step) DO NOTHING RETURNING id`,
      [
        compaction.id,
        compaction.conversationId,
        compaction.turnId,
        compaction.step,
        compaction.upToRowId,
        compaction.summary,
        compaction.tokensBefore,
        compaction.tokensAfter,
        compaction.model,
        JSON.stringify(compaction.usage),
        attempt,
      ],
    );
    return rows.length > 0;
  }

  /** Every compaction of the conversation, oldest first. */
  async list(conversationId: string, db: Queryable = this.db): Promise<Compaction[]> {
    const { rows } = await db.query<CompactionRow>('SELECT * FROM compactions WHERE conversation_id = $1 ORDER BY up_to_message_id, created_at', [conversationId]);
    return rows.map(toCompaction);
  }
}

/** A compaction as `GET /v1/conversations/:id` shows it. */
export function publicCompaction(compaction: Compaction) {
  return {
    id: compaction.id,
    upToMessageId: formatMessageId(compaction.upToRowId),
    summary: compaction.summary,
    tokensBefore: compaction.tokensBefore,
    tokensAfter: compaction.tokensAfter,
    model: compaction.model,
    usage: compaction.usage,
    turnId: compaction.turnId,
    createdAt: compaction.createdAt,
  };
}

function toCompaction(row: CompactionRow): Compaction {
  return {
    id: row.id,
    conversationId: row.conversation_id,
    turnId: row.turn_id,
    step: row.step,
    upToRowId: String(row.up_to_message_id),
    summary: row.summary,
    tokensBefore: row.tokens_before,
    tokensAfter: row.tokens_after,
    model: row.model,
    usage: row.usage,
    createdAt: row.created_at.toISOString(),
  };
}
