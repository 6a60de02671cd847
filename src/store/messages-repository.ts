import type { AssistantToolCall } from '../providers/model-provider';
import type { Queryable } from './db';

/** A stored message, as `GET /v1/conversations/:id` shows it. */
export interface StoredMessage {
  role: 'user' | 'assistant' | 'tool';
  content: unknown;
  toolCalls?: AssistantToolCall[];
  toolCallId?: string;
  turnId: string | null;
}

interface MessageRow {
  role: StoredMessage['role'];
  content: unknown;
  tool_calls: AssistantToolCall[] | null;
  tool_call_id: string | null;
  turn_id: string | null;
}

export class MessagesRepository {
  constructor(private readonly db: Queryable) {}

  async list(conversationId: string, db: Queryable = this.db): Promise<StoredMessage[]> {
    const { rows } = await db.query<MessageRow>(
      'SELECT role, content, tool_calls, tool_call_id, turn_id FROM messages WHERE conversation_id = $1 ORDER BY id',
      [conversationId],
    );
    return rows.map((row) => ({
      role: row.role,
      content: row.content,
      ...(row.tool_calls ? { toolCalls: row.tool_calls } : {}),
      ...(row.tool_call_id ? { toolCallId: row.tool_call_id } : {}),
      turnId: row.turn_id,
    }));
  }

  /** Returns false when the step's message already exists (a retried commit). */
  async insertAssistantMessage(
    input: { conversationId: string; turnId: string; step: number; content: string | null; toolCalls?: AssistantToolCall[] },
    db: Queryable = this.db,
  ): Promise<boolean> {
    const { rows } = await db.query(
      `INSERT INTO messages (conversation_id, turn_id, step, role, content, tool_calls) VALUES ($1, $2, $3, 'assistant', $4, $5)
       ON CONFLICT (turn_id, step, role) WHERE role IN ('user', 'assistant') DO NOTHING RETURNING id`,
      [
        input.conversationId,
        input.turnId,
        input.step,
        JSON.stringify(input.content),
        input.toolCalls && input.toolCalls.length > 0 ? JSON.stringify(input.toolCalls) : null,
      ],
    );
    return rows.length > 0;
  }

  async hasToolMessages(turnId: string, step: number): Promise<boolean> {
    const { rows } = await this.db.query(`SELECT 1 FROM messages WHERE turn_id = $1 AND step = $2 AND role = 'tool' LIMIT 1`, [turnId, step]);
    return rows.length > 0;
  }

  /** The step's tool messages, in the order given, in one statement; a call's message is written once. */
  async insertToolMessages(
    messages: { conversationId: string; turnId: string; step: number; toolCallId: string; content: string }[],
    db: Queryable = this.db,
  ): Promise<void> {
    if (messages.length === 0) return;
    const records = messages.map((message, position) => ({ ...message, position }));
    await db.query(
      `INSERT INTO messages (conversation_id, turn_id, step, role, content, tool_call_id)
       SELECT "conversationId", "turnId", step, 'tool', to_jsonb(content), "toolCallId"
       FROM jsonb_to_recordset($1::jsonb) AS r("conversationId" text, "turnId" text, step int, "toolCallId" text, content text, position int)
       ORDER BY position
       ON CONFLICT (turn_id, tool_call_id) WHERE role = 'tool' DO NOTHING`,
      [JSON.stringify(records)],
    );
  }
}
