import type { Queryable } from '../../store/db';

/** What a response's request asked, echoed in the response object. */
export interface ResponseRequestEcho {
  model: string | null;
  instructions: string | null;
  /** The `tools` as the request gave them. */
  tools: unknown[];
  toolChoice: unknown;
  metadata: Record<string, string>;
  background: boolean;
  /** The conversation the request named (`conversation`); absent in responses stored before it could. */
  conversation?: string | null;
}

/** A response of the OpenAI-compatible Responses API: one turn (migrations/0017_openai_compat.sql). */
export interface ResponseRecord {
  id: string;
  userId: string;
  conversationId: string;
  turnId: string;
  previousResponseId: string | null;
  /** The conversation's latest event seq when the response was made: its turn's events come after. */
  afterSeq: number;
  request: ResponseRequestEcho;
  createdAt: Date;
}

interface ResponseRow {
  id: string;
  user_id: string;
  conversation_id: string;
  turn_id: string;
  previous_response_id: string | null;
  /** bigint: text from the driver. */
  after_seq: string | number;
  request: ResponseRequestEcho;
  created_at: Date;
}

export class OpenAiResponsesRepository {
  constructor(private readonly db: Queryable) {}

  /** `on`: a transaction to write in (the one that records its turn). */
  async insert(record: Omit<ResponseRecord, 'createdAt'>, on: Queryable = this.db): Promise<ResponseRecord> {
    const { rows } = await on.query<ResponseRow>(
      `INSERT INTO openai_responses (id, user_id, conversation_id, turn_id, previous_response_id, after_seq, request)
       VALUES ($1, $2, $3, $4, $5, $6, $7) RETURNING *`,
      [record.id, record.userId, record.conversationId, record.turnId, record.previousResponseId, record.afterSeq, JSON.stringify(record.request)],
    );
    return toRecord(rows[0]!);
  }

  /** Scoped to its owner: someone else's response is indistinguishable from a missing one. */
  /** Deletes the user's response; false when there was none. Its conversation and turn stay. */
  async delete(userId: string, id: string): Promise<boolean> {
    const { rows } = await this.db.query('DELETE FROM openai_responses WHERE id = $1 AND user_id = $2 RETURNING id', [id, userId]);
    return rows.length > 0;
  }

  async get(userId: string, id: string): Promise<ResponseRecord | null> {
    const { rows } = await this.db.query<ResponseRow>('SELECT * FROM openai_responses WHERE id = $1 AND user_id = $2', [id, userId]);
    return rows[0] ? toRecord(rows[0]) : null;
  }
}

function toRecord(row: ResponseRow): ResponseRecord {
  return {
    id: row.id,
    userId: row.user_id,
    conversationId: row.conversation_id,
    turnId: row.turn_id,
    previousResponseId: row.previous_response_id,
    afterSeq: Number(row.after_seq),
    request: row.request,
    createdAt: row.created_at,
  };
}
