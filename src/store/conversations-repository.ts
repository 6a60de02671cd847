import { randomUUID } from 'node:crypto';
import type { ConversationSource } from '@switchyard/protocol';
import type { ModelSettings } from '../providers/model-settings';
import type { ResponseFormat } from '../providers/response-format';
import type { Queryable } from './db';
import { formatMessageId } from './message-id';
import type { CompactionPolicy } from '@switchyard/protocol';

export interface Conversation {
  id: string;
  userId: string;
  externalId: string | null;
  title: string | null;
  system: string | null;
  model: string | null;
  tools: string[] | null;
  /** Tool names whose calls in this conversation wait for a person's approval. */
  requireApproval: string[] | null;
  /** Its compaction policy (docs/API.md, "Long conversations"). */
  compaction: CompactionPolicy | null;
  /** Sent with every step of its turns; a turn's own settings win, field by field. */
  modelSettings: ModelSettings | null;
  /** Its turns' structured output, unless a turn brings its own. */
  responseFormat: ResponseFormat | null;
  metadata: Record<string, unknown> | null;
  source: ConversationSource;
  /** Its agent as a reference: `agent_…` (the latest version at each turn) or `agent_…@N` (pinned). */
  agent: string | null;
  lastSeq: number;
  /** A fork's origin: the conversation and the message (`msg_<n>`) its copied path ends at. */
  forkedFrom: { conversationId: string; messageId: string } | null;
  createdAt: string;
  updatedAt: string;
}

export interface NewConversation {
  userId: string;
  externalId?: string;
  title?: string;
  system?: string;
  model?: string;
  tools?: string[];
  requireApproval?: string[];
  compaction?: CompactionPolicy;
  modelSettings?: ModelSettings;
  responseFormat?: ResponseFormat;
  metadata?: Record<string, unknown>;
  /** The batch whose item this conversation runs. */
  batchId?: string;
  /** Made by `/openai/v1`: kept OPENAI_RETENTION_DAYS after its last turn (migrations/0028_openai_conversations.sql). */
  openaiRetained?: boolean;
  /** Where it is made; default `api`. */
  source?: ConversationSource;
  /** Its agent, checked by the caller (agents/agent-references.ts); a version left null is the latest at each turn. */
  agent?: { agentId: string; agentVersion: number | null };
}

/** What `deleteIfIdle` did: a conversation with a turn still active stays. */
export type ConversationDeletion = { kind: 'deleted' } | { kind: 'missing' } | { kind: 'busy'; activeTurnId: string };

/** What `createUnlessExternalIdTaken` did. */
export type NewConversationOutcome = { kind: 'created'; conversation: Conversation } | { kind: 'external_id_taken'; existing: Conversation };

interface ConversationRow {
  id: string;
  user_id: string;
  external_id: string | null;
  title: string | null;
  system: string | null;
  model: string | null;
  tools: string[] | null;
  require_approval: string[] | null;
  compaction: CompactionPolicy | null;
  model_settings: ModelSettings | null;
  response_format: ResponseFormat | null;
  metadata: Record<string, unknown> | null;
  source: ConversationSource;
  agent_id: string | null;
  agent_version: number | null;
  last_seq: number | string;
  forked_from_conversation_id: string | null;
  forked_from_message_id: string | number | null;
  created_at: Date;
  updated_at: Date;
}

/** A conversation `c` made by `/openai/v1` whose last turn (or making) is before `$2`, with no turn active. */
const EXPIRED_SQL = `c.openai_retained AND c.updated_at < $2 AND c.created_at < $2
  AND NOT EXISTS (SELECT 1 FROM turns t WHERE t.conversation_id = c.id AND (t.status IN ('queued', 'running', 'waiting_tools') OR t.created_at >= $2 OR t.finished_at >= $2))`;

const COLUMNS =
  'id, user_id, external_id, title, system, model, tools, require_approval, compaction, model_settings, response_format, metadata, source, agent_id, agent_version, last_seq, forked_from_conversation_id, forked_from_message_id, created_at, updated_at';

export class ConversationsRepository {
  constructor(
    private readonly db: Queryable,
    private readonly generateId: () => string = () => `conv_${randomUUID()}`,
  ) {}

  /**
   * Takes the conversation's row lock for the rest of `tx`: what the runner parking a turn and
   * a client answer resuming it serialise on.
   */
  async lock(conversationId: string, tx: Queryable): Promise<void> {
    await tx.query('SELECT id FROM conversations WHERE id = $1 FOR UPDATE', [conversationId]);
  }

  async create(input: NewConversation, db: Queryable = this.db): Promise<Conversation> {
    const { rows } = await db.query<ConversationRow>(
      `INSERT INTO conversations (id, user_id, external_id, title, system, model, tools, metadata, batch_id, require_approval, openai_retained, compaction, model_settings, response_format, source, agent_id, agent_version)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17) RETURNING ${COLUMNS}`,
      this.insertParams(input),
    );
    return toConversation(rows[0]!);
  }

  /**
   * Makes the conversation unless its `externalId` is the user's already: then the one that has
   * it. Also when two requests with one `externalId` arrive at once, one is made and the other
   * finds it (the unique index decides), never an error.
   */
  async createUnlessExternalIdTaken(input: NewConversation): Promise<NewConversationOutcome> {
    for (let attempt = 0; attempt < 3; attempt++) {
      const { rows } = await this.db.query<ConversationRow>(
        `INSERT INTO conversations (id, user_id, external_id, title, system, model, tools, metadata, batch_id, require_approval, openai_retained, compaction, model_settings, response_format, source, agent_id, agent_version)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17)
         ON CONFLICT (user_id, external_id) WHERE external_id IS NOT NULL DO NOTHING RETURNING ${COLUMNS}`,
        this.insertParams(input),
      );
      if (rows[0]) return { kind: 'created', conversation: toConversation(rows[0]) };
      const existing = input.externalId === undefined ? null : await this.findByExternalId(input.userId, input.externalId);
      if (existing) return { kind: 'external_id_taken', existing };
      // Not found after a conflict: the conflicting insert did not commit after all; try again.
    }
    throw new Error(`conversation externalId ${JSON.stringify(input.externalId)} neither inserted nor found`);
  }

  /**
   * The user's conversation with this `externalId` (a chat id, a batch item's run), made on
   * first use with `fields`. `created`: this call made it.
   */
  async findOrCreateByExternalId(userId: string, externalId: string, fields: Omit<NewConversation, 'userId' | 'externalId'> = {}): Promise<Conversation & { created: boolean }> {
    const outcome = await this.createUnlessExternalIdTaken({ ...fields, userId, externalId });
    return outcome.kind === 'created' ? { ...outcome.conversation, created: true } : { ...outcome.existing, created: false };
  }

  async findByExternalId(userId: string, externalId: string): Promise<Conversation | null> {
    const { rows } = await this.db.query<ConversationRow>(`SELECT ${COLUMNS} FROM conversations WHERE user_id = $1 AND external_id = $2`, [userId, externalId]);
    return rows[0] ? toConversation(rows[0]) : null;
  }

  /** Scoped to its owner: someone else's conversation is indistinguishable from a missing one. */
  async get(userId: string, id: string, db: Queryable = this.db, lock = false): Promise<Conversation | null> {
    const { rows } = await db.query<ConversationRow>(`SELECT ${COLUMNS} FROM conversations WHERE id = $1 AND user_id = $2${lock ? ' FOR UPDATE' : ''}`, [id, userId]);
    return rows[0] ? toConversation(rows[0]) : null;
  }

  /**
   * A new conversation of the same user with the settings of `id` (not its `externalId`) and
   * copies of its messages `rowIds` (row ids, in their order), `forkedFrom` the message
   * `messageId`: the caller chooses the messages and checks them (fork-conversation.ts). The
   * copies belong to no turn. One statement: the copy exists whole or not at all. Null when
   * `id` is not the user's.
   */
  async fork(userId: string, id: string, messageId: string, rowIds: readonly string[], db: Queryable = this.db): Promise<Conversation | null> {
    const { rows } = await db.query<ConversationRow>(
      `WITH origin AS (
         SELECT * FROM conversations WHERE id = $1 AND user_id = $2
       ), created AS (
         INSERT INTO conversations (id, user_id, title, system, model, tools, metadata, require_approval, compaction, model_settings, response_format, source, agent_id, agent_version, forked_from_conversation_id, forked_from_message_id)
         SELECT $4, user_id, title, system, model, tools, metadata, require_approval, compaction, model_settings, response_format, source, agent_id, agent_version, id, $3 FROM origin
         RETURNING ${COLUMNS}
       ), copied AS (
         INSERT INTO messages (conversation_id, step, role, content, tool_calls, tool_call_id, incomplete, reasoning)
         SELECT created.id, m.step, m.role, m.content, m.tool_calls, m.tool_call_id, m.incomplete, m.reasoning FROM messages m, created
         WHERE m.conversation_id = $1 AND m.id = ANY($5::bigint[])
         ORDER BY m.id
       )
       SELECT * FROM created`,
      [id, userId, messageId, this.generateId(), rowIds],
    );
    return rows[0] ? toConversation(rows[0]) : null;
  }

  /**
   * Waits until no transaction holds the conversation's row lock (an admission that has not
   * committed yet), without holding it: an autocommit statement's lock ends with it.
   */
  async awaitRowLock(id: string, db: Queryable = this.db): Promise<void> {
    await db.query('SELECT 1 FROM conversations WHERE id = $1 FOR KEY SHARE', [id]);
  }

  async getById(id: string, db: Queryable = this.db): Promise<Conversation | null> {
    const { rows } = await db.query<ConversationRow>(`SELECT ${COLUMNS} FROM conversations WHERE id = $1`, [id]);
    return rows[0] ? toConversation(rows[0]) : null;
  }

  /**
   * Newest first, keyset-paginated on the creation ordinal, so pages stay stable while new ones
   * arrive. `batchItems`: only the conversations that run batch items (true), or only the others
   * (false); each reads its own partial index. `sources`: only those made there.
   */
  async list(
    userId: string,
    options: { limit: number; cursor?: ConversationCursor; externalId?: string; batchItems?: boolean; sources?: readonly ConversationSource[] },
  ): Promise<{ data: Conversation[]; nextCursor: ConversationCursor | null }> {
    const params: unknown[] = [userId];
    let where = 'user_id = $1';
    // Literal, not a parameter: the planner matches a partial index's predicate only in the query's text.
    if (options.batchItems !== undefined) where += options.batchItems ? ' AND batch_id IS NOT NULL' : ' AND batch_id IS NULL';
    if (options.sources !== undefined) {
      params.push(options.sources);
      where += ` AND source = ANY($${params.length}::text[])`;
    }
    if (options.externalId !== undefined) {
      params.push(options.externalId);
      where += ` AND external_id = $${params.length}`;
    }
    if (options.cursor) {
      params.push(options.cursor.before);
      where += ` AND ordinal < $${params.length}`;
    }
    params.push(options.limit + 1);
    const { rows } = await this.db.query<ConversationRow & { ordinal: string | number }>(
      `SELECT ${COLUMNS}, ordinal FROM conversations WHERE ${where} ORDER BY ordinal DESC LIMIT $${params.length}`,
      params,
    );
    const pageRows = rows.slice(0, options.limit);
    const last = pageRows[pageRows.length - 1];
    const nextCursor = rows.length > options.limit && last ? { before: String(last.ordinal) } : null;
    return { data: pageRows.map(toConversation), nextCursor };
  }

  private insertParams(input: NewConversation): unknown[] {
    return [
      this.generateId(),
      input.userId,
      input.externalId ?? null,
      input.title ?? null,
      input.system ?? null,
      input.model ?? null,
      input.tools === undefined ? null : JSON.stringify(input.tools),
      input.metadata === undefined ? null : JSON.stringify(input.metadata),
      input.batchId ?? null,
      input.requireApproval === undefined ? null : JSON.stringify(input.requireApproval),
      input.openaiRetained === true,
      input.compaction === undefined ? null : JSON.stringify(input.compaction),
      input.modelSettings === undefined ? null : JSON.stringify(input.modelSettings),
      input.responseFormat === undefined ? null : JSON.stringify(input.responseFormat),
      input.source ?? 'api',
      input.agent?.agentId ?? null,
      input.agent?.agentVersion ?? null,
    ];
  }

  /** Replaces the user's conversation's `metadata`; null when it is not the user's. */
  async updateMetadata(userId: string, id: string, metadata: Record<string, unknown> | null): Promise<Conversation | null> {
    const { rows } = await this.db.query<ConversationRow>(`UPDATE conversations SET metadata = $3, updated_at = now() WHERE id = $1 AND user_id = $2 RETURNING ${COLUMNS}`, [
      id,
      userId,
      metadata === null ? null : JSON.stringify(metadata),
    ]);
    return rows[0] ? toConversation(rows[0]) : null;
  }

  /** Sets the conversation's compaction policy (a Responses `context_management`); from its next turn. */
  async setCompaction(id: string, policy: CompactionPolicy): Promise<void> {
    await this.db.query('UPDATE conversations SET compaction = $2, updated_at = now() WHERE id = $1', [id, JSON.stringify(policy)]);
  }

  /**
   * Deletes the user's conversation with its messages, turns and what hangs on them (the
   * foreign keys cascade; the usage ledger's rows stay), unless a turn of it is active. Under
   * the conversation's row lock, which admitting a turn takes too: no turn starts on a
   * conversation being deleted.
   */
  async deleteIfIdle(userId: string, id: string, tx: Queryable): Promise<ConversationDeletion> {
    const { rows } = await tx.query('SELECT id FROM conversations WHERE id = $1 AND user_id = $2 FOR UPDATE', [id, userId]);
    if (rows.length === 0) return { kind: 'missing' };
    const active = await tx.query<{ id: string }>("SELECT id FROM turns WHERE conversation_id = $1 AND status IN ('queued', 'running', 'waiting_tools') LIMIT 1", [id]);
    if (active.rows[0]) return { kind: 'busy', activeTurnId: active.rows[0].id };
    await tx.query('DELETE FROM conversations WHERE id = $1', [id]);
    return { kind: 'deleted' };
  }

  /**
   * Deletes a conversation made by `/openai/v1` if it is still expired (see `listExpiredOpenAi`):
   * read again under its row lock, so that a turn admitted since the listing keeps it.
   */
  async deleteIfExpired(id: string, before: Date, tx: Queryable): Promise<boolean> {
    await tx.query('SELECT id FROM conversations WHERE id = $1 FOR UPDATE', [id]);
    const { rows } = await tx.query(`DELETE FROM conversations c WHERE c.id = $1 AND ${EXPIRED_SQL} RETURNING c.id`, [id, before]);
    return rows.length > 0;
  }

  /**
   * Up to `limit` conversations made by `/openai/v1` whose last turn (or, with none, their
   * making) is older than `before`, with no turn active: what the retention sweep deletes.
   * `updated_at` moves with every event, so the index leaves out the recent ones at once.
   */
  async listExpiredOpenAi(before: Date, limit: number): Promise<{ id: string; userId: string }[]> {
    const { rows } = await this.db.query<{ id: string; user_id: string }>(
      `SELECT c.id, c.user_id FROM conversations c
       WHERE ${EXPIRED_SQL.replaceAll('$2', '$1')}
       ORDER BY c.updated_at LIMIT $2`,
      [before, limit],
    );
    return rows.map((row) => ({ id: row.id, userId: row.user_id }));
  }

  /** Keeps PostgreSQL's copy of the latest seq; never moves it back. */
  async raiseLastSeq(id: string, seq: number, db: Queryable = this.db): Promise<void> {
    await db.query('UPDATE conversations SET last_seq = GREATEST(last_seq, $2), updated_at = now() WHERE id = $1', [id, seq]);
  }
}

/** Where the next page starts: before this creation ordinal (a decimal string; it is a bigint). */
export interface ConversationCursor {
  before: string;
}

function toConversation(row: ConversationRow): Conversation {
  return {
    id: row.id,
    userId: row.user_id,
    externalId: row.external_id,
    title: row.title,
    system: row.system,
    model: row.model,
    tools: row.tools,
    requireApproval: row.require_approval,
    compaction: row.compaction,
    modelSettings: row.model_settings,
    responseFormat: row.response_format,
    metadata: row.metadata,
    source: row.source,
    agent: row.agent_id === null ? null : row.agent_version === null ? row.agent_id : `${row.agent_id}@${row.agent_version}`,
    lastSeq: Number(row.last_seq),
    forkedFrom:
      row.forked_from_conversation_id !== null && row.forked_from_message_id !== null
        ? { conversationId: row.forked_from_conversation_id, messageId: formatMessageId(row.forked_from_message_id) }
        : null,
    createdAt: row.created_at.toISOString(),
    updatedAt: row.updated_at.toISOString(),
  };
}
