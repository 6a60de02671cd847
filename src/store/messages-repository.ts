import type { AssistantToolCall } from '../providers/model-provider';
import type { ExchangeMessage } from '../providers/tool-exchange-fault';
import type { Queryable } from './db';
import { formatMessageId } from './message-id';

/** A stored message, as `GET /v1/conversations/:id` shows it. */
export interface StoredMessage {
  /** `msg_<n>` (message-id.ts). */
  id: string;
  role: 'user' | 'assistant' | 'tool';
  content: unknown;
  toolCalls?: AssistantToolCall[];
  toolCallId?: string;
  turnId: string | null;
  /** The turn that replaced this message (an edit or a regenerate); absent on the conversation's path. */
  supersededBy?: string;
  /** What a cancelled or interrupted step had streamed: never finished, its calls left out. */
  incomplete?: true;
  /** The reasoning such a step had streamed, when it had. */
  reasoning?: string;
}

/** A message's columns as a turn reads them. */
export interface MessageRow {
  id: string | number;
  role: StoredMessage['role'];
  content: unknown;
  tool_calls: AssistantToolCall[] | null;
  tool_call_id: string | null;
  turn_id: string | null;
  superseded_by?: string | null;
  incomplete?: boolean;
  reasoning?: string | null;
}

/** The columns {@link toStoredMessage} reads. */
export const MESSAGE_COLUMNS = 'id, role, content, tool_calls, tool_call_id, turn_id, superseded_by, incomplete, reasoning';

/**
 * A message of a path as the tool-exchange rules read it: its role and call ids, not its
 * content. A user message given as chat messages (the OpenAI routes) is outlined as those
 * messages, each with the message's id.
 */
export interface MessageOutline extends ExchangeMessage {
  /** The stored message's row id. */
  rowId: string;
  tool_calls: { id: string }[];
  tool_call_id: string | null;
}

/** Where an outline of a path ends: before the message `rowId`, or with it (`inclusive`). */
export interface OutlineEnd {
  rowId: string;
  inclusive: boolean;
  /** Also the tool messages that directly follow it on the path: the rest of its step's results. */
  withToolRun?: boolean;
}

/** A message stored with no turn (migrations/0001_init.sql's columns). */
export interface ItemRow {
  role: 'user' | 'assistant' | 'tool';
  content: unknown;
  toolCalls?: AssistantToolCall[];
  toolCallId?: string;
}

/** A regenerate answers its branch point again; an edit replaces it. */
export type BranchKind = 'regenerate' | 'edit';

/** A user message on a conversation's path that a regenerate or an edit starts from. */
export interface BranchPoint {
  /** The message's row id. */
  messageId: string;
  turnId: string;
  content: unknown;
}

export class MessagesRepository {
  constructor(private readonly db: Queryable) {}

  /**
   * The conversation's path (its messages no turn replaced) in order; `includeSuperseded`: every
   * message it ever had, the replaced ones marked. One query either way, the path's through its
   * own index. `afterRowId`: only the path's messages after that row (those a summary does not
   * cover), a range of that index, so the read costs what is after it (a row comparison: a bare
   * `id >` lets the planner walk the primary key through every conversation's later messages).
   */
  async list(conversationId: string, options: { includeSuperseded?: boolean; afterRowId?: string } = {}, db: Queryable = this.db): Promise<StoredMessage[]> {
    const { rows } = await db.query<MessageRow>(
      options.includeSuperseded
        ? `SELECT ${MESSAGE_COLUMNS} FROM messages WHERE conversation_id = $1 ORDER BY id`
        : `SELECT ${MESSAGE_COLUMNS} FROM messages WHERE conversation_id = $1 AND superseded_by IS NULL AND (conversation_id, id) > ($1, $2::bigint) ORDER BY id`,
      options.includeSuperseded ? [conversationId] : [conversationId, options.afterRowId ?? '0'],
    );
    return rows.map(toStoredMessage);
  }

  /**
   * A turn's answer: its assistant and tool messages still on the path, in order. Read through the
   * per-turn indexes (each covers some roles), not the conversation's whole history.
   */
  async listTurnAnswer(turnId: string): Promise<StoredMessage[]> {
    const { rows } = await this.db.query<MessageRow>(
      `SELECT ${MESSAGE_COLUMNS} FROM messages WHERE turn_id = $1 AND role = 'assistant' AND superseded_by IS NULL
       UNION ALL
       SELECT ${MESSAGE_COLUMNS} FROM messages WHERE turn_id = $1 AND role = 'tool' AND superseded_by IS NULL
       ORDER BY id`,
      [turnId],
    );
    return rows.map(toStoredMessage);
  }

  /** The user message a turn wrote (its input), replaced or not; null for a regenerate, which writes none. */
  async findTurnInput(turnId: string): Promise<StoredMessage | null> {
    const { rows } = await this.db.query<MessageRow>(`SELECT ${MESSAGE_COLUMNS} FROM messages WHERE turn_id = $1 AND role = 'user' ORDER BY id LIMIT 1`, [turnId]);
    return rows[0] ? toStoredMessage(rows[0]) : null;
  }

  /**
   * A user message on the conversation's path: `messageId` (a row id), or (null) the last one. Null when
   * there is none, or the id names no user message on this path (someone else's, replaced, not
   * a user message): the caller cannot tell which, and need not.
   */
  async findBranchPoint(conversationId: string, messageId: string | null, db: Queryable = this.db): Promise<BranchPoint | null> {
    const { rows } = await db.query<{ id: string | number; turn_id: string; content: unknown }>(
      messageId === null
        ? `SELECT id, turn_id, content FROM messages WHERE conversation_id = $1 AND role = 'user' AND superseded_by IS NULL ORDER BY id DESC LIMIT 1`
        : `SELECT id, turn_id, content FROM messages WHERE conversation_id = $1 AND role = 'user' AND superseded_by IS NULL AND id = $2`,
      messageId === null ? [conversationId] : [conversationId, messageId],
    );
    const row = rows[0];
    return row ? { messageId: String(row.id), turnId: row.turn_id, content: row.content } : null;
  }

  /**
   * The user message on the conversation's path whose AI SDK id is `uiMessageId`: the id the
   * client gave it (`/api/chat` keeps it with the turn), or `<turnId>:user`, the id the stored
   * history gives it (stored-to-ui-messages.ts).
   */
  async findByUiMessageId(conversationId: string, uiMessageId: string, db: Queryable = this.db): Promise<BranchPoint | null> {
    const turnId = uiMessageId.endsWith(':user') ? uiMessageId.slice(0, -':user'.length) : null;
    const { rows } = await db.query<{ id: string | number; turn_id: string; content: unknown }>(
      `SELECT m.id, m.turn_id, m.content FROM messages m JOIN turns t ON t.id = m.turn_id
       WHERE m.conversation_id = $1 AND m.role = 'user' AND m.superseded_by IS NULL AND t.conversation_id = $1
         AND (t.ui_message_id = $2 OR t.id = $3)
       ORDER BY m.id DESC LIMIT 1`,
      [conversationId, uiMessageId, turnId],
    );
    const row = rows[0];
    return row ? { messageId: String(row.id), turnId: row.turn_id, content: row.content } : null;
  }

  /**
   * The last `count` messages of a conversation's path, oldest first, and never fewer than all of
   * `turnId`'s (from its user message, the first it writes, or the one a regenerate answers): a turn always sees its own question
   * and steps, however many they are. Both bounds are read through indexes (the conversation's
   * from its end), so the cost follows `count`, not the conversation's length.
   */
  async listRecent(conversationId: string, count: number, turnId: string, db: Queryable = this.db): Promise<StoredMessage[]> {
    // A regenerate writes no user message: the one it answers again is its first.
    const { rows } = await db.query<MessageRow>(
      `SELECT ${MESSAGE_COLUMNS} FROM messages
       WHERE conversation_id = $1 AND superseded_by IS NULL AND id >= LEAST(
         COALESCE((SELECT id FROM messages WHERE conversation_id = $1 AND superseded_by IS NULL ORDER BY id DESC OFFSET $2 - 1 LIMIT 1), 0),
         COALESCE((SELECT id FROM messages WHERE turn_id = $3 AND step = 0 AND role = 'user'), 9223372036854775807),
         COALESCE((SELECT from_message_id FROM turns WHERE id = $3 AND branch = 'regenerate'), 9223372036854775807))
       ORDER BY id`,
      [conversationId, count, turnId],
    );
    return rows.map(toStoredMessage);
  }

  /**
   * The conversation's path up to `end`, outlined ({@link MessageOutline}) in order; empty when
   * `end` is inclusive and its message is not on the path. Contents are not read (but for
   * chat-messages inputs, their outline), so a long conversation is checked without being
   * carried whole.
   */
  async listOutline(conversationId: string, end: OutlineEnd, db: Queryable = this.db): Promise<MessageOutline[]> {
    const outline = await this.outline(
      `id < $2 OR ($3 AND id = $2)
       OR ($4 AND role = 'tool' AND id > $2 AND id < COALESCE(
         (SELECT min(n.id) FROM messages n WHERE n.conversation_id = $1 AND n.superseded_by IS NULL AND n.id > $2 AND n.role <> 'tool'),
         9223372036854775807))`,
      [conversationId, end.rowId, end.inclusive, end.withToolRun === true],
      db,
    );
    return end.inclusive && !outline.some((message) => message.rowId === end.rowId) ? [] : outline;
  }

  /**
   * The path's last step, outlined: from its last message that is not a tool message (the
   * assistant message that called, or whatever ended the path) to its end, read from the end.
   */
  async listLastStepOutline(conversationId: string, db: Queryable = this.db): Promise<MessageOutline[]> {
    return this.outline(
      `id >= COALESCE((SELECT max(n.id) FROM messages n WHERE n.conversation_id = $1 AND n.superseded_by IS NULL AND n.role <> 'tool'), 0)`,
      [conversationId],
      db,
    );
  }

  /** The outline of the path's messages that `range` (SQL on `messages`, `$1` the conversation) keeps. */
  private async outline(range: string, params: unknown[], db: Queryable): Promise<MessageOutline[]> {
    const callIds = (calls: string) => `ARRAY(SELECT c->>'id' FROM jsonb_array_elements(CASE WHEN jsonb_typeof(${calls}) = 'array' THEN ${calls} ELSE '[]' END) c)`;
    const { rows } = await db.query<{ id: string | number; role: string; call_ids: string[]; tool_call_id: string | null }>(
      `WITH path AS (
         SELECT id, role, content, tool_calls, tool_call_id, COALESCE(role = 'user' AND content @> '{"type": "chat_messages"}', false) AS chat
         FROM messages WHERE conversation_id = $1 AND superseded_by IS NULL AND (${range})
       )
       SELECT path.id, part.role, part.call_ids, part.tool_call_id FROM path
       CROSS JOIN LATERAL (
         SELECT e.value->>'role' AS role, ${callIds("e.value->'tool_calls'")} AS call_ids, e.value->>'tool_call_id' AS tool_call_id, e.ordinality AS position
         FROM jsonb_array_elements(CASE WHEN path.chat THEN path.content->'messages' ELSE '[]' END) WITH ORDINALITY e
         UNION ALL
         SELECT path.role, ${callIds('path.tool_calls')}, path.tool_call_id, 0 WHERE NOT path.chat
       ) part
       ORDER BY path.id, part.position`,
      params,
    );
    return rows.map((row) => ({ rowId: String(row.id), role: row.role, tool_calls: row.call_ids.map((id) => ({ id })), tool_call_id: row.tool_call_id }));
  }

  /**
   * Messages a conversation is made with (OpenAI's Conversations API), before any turn, of no
   * turn, in order: a user message's content as a turn's input is stored (chat messages when
   * several); an assistant message's calls in its column, where admission looks for unanswered
   * ones.
   */
  async insertItems(conversationId: string, rows: readonly ItemRow[], db: Queryable = this.db): Promise<void> {
    for (const row of rows) {
      await db.query('INSERT INTO messages (conversation_id, role, content, tool_calls, tool_call_id) VALUES ($1, $2, $3, $4, $5)', [
        conversationId,
        row.role,
        JSON.stringify(row.content),
        row.toolCalls ? JSON.stringify(row.toolCalls) : null,
        row.toolCallId ?? null,
      ]);
    }
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
      [input.conversationId, input.turnId, input.step, JSON.stringify(input.content), input.toolCalls && input.toolCalls.length > 0 ? JSON.stringify(input.toolCalls) : null],
    );
    return rows.length > 0;
  }

  /**
   * What an interrupted step had streamed, as the turn's incomplete assistant message of that
   * step (content null when it streamed only reasoning), in the transaction that ends the turn;
   * nothing when the step has its message already. The text comes from the provider's stream,
   * made storable where it was read.
   */
  async insertIncompleteMessage(input: { conversationId: string; turnId: string; step: number; text: string; reasoning: string }, db: Queryable = this.db): Promise<void> {
    await db.query(
      `INSERT INTO messages (conversation_id, turn_id, step, role, content, reasoning, incomplete) VALUES ($1, $2, $3, 'assistant', $4, $5, true)
       ON CONFLICT (turn_id, step, role) WHERE role IN ('user', 'assistant') DO NOTHING`,
      [input.conversationId, input.turnId, input.step, JSON.stringify(input.text || null), input.reasoning || null],
    );
  }

  /** The turn's incomplete assistant message (a cancel or an interrupt kept it), if it has one. */
  async findIncomplete(turnId: string, db: Queryable = this.db): Promise<(StoredMessage & { step: number }) | null> {
    const { rows } = await db.query<MessageRow & { step: number }>(
      `SELECT ${MESSAGE_COLUMNS}, step FROM messages WHERE turn_id = $1 AND role = 'assistant' AND incomplete ORDER BY step DESC LIMIT 1`,
      [turnId],
    );
    const row = rows[0];
    return row ? { ...toStoredMessage(row), step: row.step } : null;
  }

  /**
   * The tool messages of a turn's settled calls (of one step, or of every step), in the
   * assistant's order, in one statement; a call's message is written once. With `fence`, only
   * while that attempt runs the turn (its row locked for the insert): 'fenced', and nothing
   * written, once it does not; 'existed' when an earlier run wrote them.
   */
  async insertToolMessages(scope: { turnId: string; step?: number }, db: Queryable = this.db, fence?: { attempt: number }): Promise<'written' | 'existed' | 'fenced'> {
    const calls = '(SELECT * FROM tool_calls WHERE turn_id = $1 AND ($2::int IS NULL OR step = $2)) AS calls';
    const params = [scope.turnId, scope.step ?? null];
    if (!fence) {
      await db.query(insertToolMessagesFrom(calls), params);
      return 'written';
    }
    const { rows } = await db.query<{ held: boolean; written: boolean; settled: boolean }>(
      `WITH held AS (SELECT id FROM turns WHERE id = $1 AND attempt = $3 AND status = 'running' FOR UPDATE),
       inserted AS (${insertToolMessagesFrom(calls, 'AND EXISTS (SELECT 1 FROM held)')} RETURNING 1)
       SELECT EXISTS (SELECT 1 FROM held) AS held, EXISTS (SELECT 1 FROM inserted) AS written,
              EXISTS (SELECT 1 FROM tool_calls WHERE turn_id = $1 AND ($2::int IS NULL OR step = $2) AND message IS NOT NULL) AS settled`,
      [...params, fence.attempt],
    );
    const { held, written, settled } = rows[0]!;
    return !held ? 'fenced' : written || !settled ? 'written' : 'existed';
  }
}

/**
 * An INSERT of the `tool` messages of the settled calls among `calls` (a relation with the
 * columns of tool_calls), in the assistant's order; a call's message is written once.
 */
export const insertToolMessagesFrom = (calls: string, condition = '') =>
  `INSERT INTO messages (conversation_id, turn_id, step, role, content, tool_call_id)
   SELECT conversation_id, turn_id, step, 'tool', to_jsonb(message), tool_call_id FROM ${calls}
   WHERE message IS NOT NULL ${condition} ORDER BY step, position
   ON CONFLICT (turn_id, tool_call_id) WHERE role = 'tool' DO NOTHING`;

export function toStoredMessage(row: MessageRow): StoredMessage {
  return {
    id: formatMessageId(row.id),
    role: row.role,
    content: row.content,
    ...(row.tool_calls ? { toolCalls: row.tool_calls } : {}),
    ...(row.tool_call_id ? { toolCallId: row.tool_call_id } : {}),
    turnId: row.turn_id,
    ...(row.superseded_by ? { supersededBy: row.superseded_by } : {}),
    ...(row.incomplete ? { incomplete: true as const } : {}),
    ...(row.reasoning ? { reasoning: row.reasoning } : {}),
  };
}
