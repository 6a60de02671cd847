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

/** A message's columns as a turn reads them. */
export interface MessageRow {
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
    return rows.map(toStoredMessage);
  }

  /**
   * The last `count` messages of a conversation, oldest first, and never fewer than all of
   * `turnId`'s (from its user message, the first it writes): a turn always sees its own question
   * and steps, however many they are. Both bounds are read through indexes (the conversation's
   * from its end), so the cost follows `count`, not the conversation's length.
   */
  async listRecent(conversationId: string, count: number, turnId: string, db: Queryable = this.db): Promise<StoredMessage[]> {
    const { rows } = await db.query<MessageRow>(
      `SELECT role, content, tool_calls, tool_call_id, turn_id FROM messages
       WHERE conversation_id = $1 AND id >= LEAST(
         COALESCE((SELECT id FROM messages WHERE conversation_id = $1 ORDER BY id DESC OFFSET $2 - 1 LIMIT 1), 0),
         COALESCE((SELECT id FROM messages WHERE turn_id = $3 AND step = 0 AND role = 'user'), 9223372036854775807))
       ORDER BY id`,
      [conversationId, count, turnId],
    );
    return rows.map(toStoredMessage);
  }

  /** Assistant messages given as context (a batch item's), before the turn that follows them. */
  async insertContext(conversationId: string, contents: unknown[], db: Queryable = this.db): Promise<void> {
    for (const content of contents) {
      await db.query("INSERT INTO messages (conversation_id, role, content) VALUES ($1, 'assistant', $2)", [conversationId, JSON.stringify(content)]);
    }
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

  /**
   * The step's tool messages, in the order given, in one statement; a call's message is written
   * once. With `fence`, only while that attempt runs the turn (its row locked for the insert):
   * 'fenced', and nothing written, once it does not; 'existed' when an earlier run wrote them.
   */
  async insertToolMessages(
    messages: { conversationId: string; turnId: string; step: number; toolCallId: string; content: string }[],
    db: Queryable = this.db,
    fence?: { turnId: string; attempt: number },
  ): Promise<'written' | 'existed' | 'fenced'> {
    const records = JSON.stringify(messages.map((message, position) => ({ ...message, position })));
    const insert = (condition: string) =>
      `INSERT INTO messages (conversation_id, turn_id, step, role, content, tool_call_id)
       SELECT "conversationId", "turnId", step, 'tool', to_jsonb(content), "toolCallId"
       FROM jsonb_to_recordset($1::jsonb) AS r("conversationId" text, "turnId" text, step int, "toolCallId" text, content text, position int)
       ${condition} ORDER BY position
       ON CONFLICT (turn_id, tool_call_id) WHERE role = 'tool' DO NOTHING`;
    if (!fence) {
      if (messages.length > 0) await db.query(insert(''), [records]);
      return 'written';
    }
    const { rows } = await db.query<{ held: boolean; written: boolean }>(
      `WITH held AS (SELECT id FROM turns WHERE id = $2 AND attempt = $3 AND status = 'running' FOR UPDATE),
       inserted AS (${insert('WHERE EXISTS (SELECT 1 FROM held)')} RETURNING 1)
       SELECT EXISTS (SELECT 1 FROM held) AS held, EXISTS (SELECT 1 FROM inserted) AS written`,
      [records, fence.turnId, fence.attempt],
    );
    const { held, written } = rows[0]!;
    return !held ? 'fenced' : written || messages.length === 0 ? 'written' : 'existed';
  }
}

export function toStoredMessage(row: MessageRow): StoredMessage {
  return {
    role: row.role,
    content: row.content,
    ...(row.tool_calls ? { toolCalls: row.tool_calls } : {}),
    ...(row.tool_call_id ? { toolCallId: row.tool_call_id } : {}),
    turnId: row.turn_id,
  };
}
