import { randomUUID } from 'node:crypto';
import type { AgentConfig } from '../agents/store/agent-config';
import type { EventPayload, Usage } from '../events/event';
import type { CompactionPolicy } from '@switchyard/protocol';
import type { ToolChoice, ToolDefinition } from '../providers/model-provider';
import type { ModelSettings } from '../providers/model-settings';
import type { ResponseFormat } from '../providers/response-format';
import type { Conversation } from './conversations-repository';
import type { Queryable } from './db';
import { dateFromJson } from './json-rows';
import { insertToolMessagesFrom, MESSAGE_COLUMNS, toStoredMessage, type BranchKind, type BranchPoint, type MessageRow, type StoredMessage } from './messages-repository';
import { toolCallFromJson, type JsonToolCallRow, type StepState } from './tool-calls-repository';

export type TurnStatus = 'queued' | 'running' | 'waiting_tools' | 'completed' | 'failed' | 'cancelled';
export const ACTIVE_TURN_STATUSES: readonly TurnStatus[] = ['queued', 'running', 'waiting_tools'];
export const isTerminal = (status: TurnStatus) => !ACTIVE_TURN_STATUSES.includes(status);

/**
 * The status a turn shows its users: parked with every unsettled call waiting for a person,
 * `waiting_approval`; queued until a budget allows its next step, `waiting_budget`.
 */
export function shownStatus(turn: Pick<Turn, 'status' | 'awaiting'>): TurnStatus | 'waiting_approval' | 'waiting_budget' {
  if (turn.status === 'queued' && turn.awaiting === 'budget') return 'waiting_budget';
  return turn.status === 'waiting_tools' && turn.awaiting === 'approvals' ? 'waiting_approval' : turn.status;
}

export interface TurnOptions {
  model?: string;
  tools?: string[];
  toolChoice?: ToolChoice;
  /** Tool names whose calls in this turn wait for a person's approval (besides those declared so). */
  requireApproval?: string[];
  maxSteps?: number;
  /** The most recent stored messages the turn sends the model (see history-window.ts). */
  maxHistoryMessages?: number;
  /**
   * Functions the caller declared and runs itself (the OpenAI-compatible routes): offered to the
   * model beside the turn's tools, never run here. A step that calls one ends the turn (after its
   * server-run calls settle) with finishReason `tool_calls`; the caller answers in its next turn.
   */
  functions?: ToolDefinition[];
  /** Replaces the conversation's system prompt for this turn only (OpenAI's `instructions`). */
  instructions?: string;
  /** Sent with every step's request (temperature, max_tokens, …): honoured, never dropped. */
  modelSettings?: ModelSettings;
  /** Structured output: sent as `response_format` on every step, the final answer validated against it. */
  responseFormat?: ResponseFormat;
  /** A compaction turn (`POST /v1/conversations/:id/compact`): no user message, no step, one forced compaction. */
  compact?: { instructions?: string };
}

export interface StepRecord {
  step: number;
  finishReason: string;
  /** Calls of the caller's functions the step made (TurnOptions.functions): the turn ends after it. */
  callerToolCalls?: number;
  usage: Usage;
  startedAt: string;
  finishedAt: string;
}

export interface Turn {
  id: string;
  conversationId: string;
  userId: string;
  status: TurnStatus;
  input: unknown;
  options: TurnOptions;
  idempotencyKey: string | null;
  requestHash: string | null;
  attempt: number;
  /** Provider failures retried so far; bounded by the retry policy. */
  providerRetries: number;
  /** The provider failure behind the latest retry. */
  lastError: { code: string; message: string; at: string } | null;
  /** When a turn waiting out a provider failure may be tried again (null: at once). */
  retryAt: string | null;
  step: number;
  finishReason: string | null;
  error: { code: string; message: string } | null;
  usage: Usage;
  steps: StepRecord[];
  /**
   * While `waiting_tools`: `tools` (its tool jobs run), `clients` (parked for client answers,
   * approved calls or both), `approvals` (parked, every unsettled call waits for a person: shown
   * as `waiting_approval`). While `queued`: `budget` (parked by a `pause` budget until it is
   * raised or its period resets: shown as `waiting_budget`), else null.
   */
  awaiting: 'tools' | 'clients' | 'approvals' | 'budget' | null;
  /** While running: the id of the queue job that runs it. */
  runningJob: string | null;
  /** A batch item's turn: its batch's priority (queued behind interactive turns); null otherwise. */
  batchPriority: number | null;
  /** What announces the turn's end, stored with it (null while it runs, and for turns ended before they were stored). */
  endEvents: EventPayload[] | null;
  /** The W3C traceparent of the span that admitted it (null when tracing was off): its jobs join that trace. */
  traceparent: string | null;
  /** A regenerate or an edit, and the user message (row id) it answers again or replaces; null for other turns. */
  branch: { kind: BranchKind; fromMessageId: string } | null;
  /** The turn that replaced this one's messages (an edit or a regenerate further up the path). */
  supersededBy: string | null;
  /** The AI SDK's id of its user message (turns posted through `/api/chat`). */
  uiMessageId: string | null;
  /** The API key that admitted it (null: none, as a batch's items). */
  keyId: string | null;
  /** The agent the turn runs on and its version, resolved when it was recorded (migration 0040); null without one. */
  agentId: string | null;
  agentVersion: number | null;
  createdAt: string;
  startedAt: string | null;
  finishedAt: string | null;
  /** With a responseFormat: the final answer, parsed and validated; set with the turn's end. */
  output?: unknown;
}

/** A compaction's summary and the row id of the last message it stands in for. */
export interface LatestSummary {
  summary: string;
  upToRowId: string;
}

/** A turn taken by a job, with what its run needs from the conversation and the user. */
export interface BegunAttempt {
  turn: Turn;
  /** A new attempt (not the continuation of a tool phase). */
  restarted: boolean;
  previous: Pick<Turn, 'status' | 'awaiting'>;
  conversation: Pick<Conversation, 'system' | 'model' | 'tools' | 'requireApproval' | 'compaction' | 'modelSettings' | 'responseFormat'>;
  /** The configuration of the agent version the turn runs on (null: no agent). */
  agent: AgentConfig | null;
  /** The tools the user may use (null: all). */
  userAllowedTools: string[] | null;
  /** The conversation's latest compaction whose last message is on the path the attempt reads (null: none). */
  summary: LatestSummary | null;
  /**
   * With `readHistory`, when the attempt starts a step and the turn sends its whole history: the
   * conversation's messages after `summary`'s last (all of them without one), read in the
   * statement that checked no earlier turn is unfinished (so every message of those turns is in
   * it). On the first step its own user message is last; after a tool phase, the step's tool
   * messages are.
   */
  history?: StoredMessage[];
  /**
   * Past the first step: the last step's calls, and whether their tool messages were written
   * before (the phase completed) or by this take (every call had its outcome; the run announces
   * the phase's end).
   */
  lastStep?: StepState;
  /** Past the first step: the id of every call of the turn so far. */
  toolCallIds?: string[];
}

interface BegunRow extends TurnRow {
  previous_status: TurnStatus;
  previous_awaiting: Turn['awaiting'];
  conversation_system: string | null;
  conversation_model: string | null;
  conversation_tools: string[] | null;
  conversation_compaction: CompactionPolicy | null;
  conversation_require_approval: string[] | null;
  conversation_model_settings: ModelSettings | null;
  conversation_response_format: ResponseFormat | null;
  user_allowed_tools: string[] | null;
  agent_config: AgentConfig | null;
  history: MessageRow[] | null;
  summary: LatestSummary | null;
  step_calls: JsonToolCallRow[] | null;
  tool_messages_written: boolean;
  tool_messages_written_here: boolean;
  tool_call_ids: string[] | null;
}

interface TurnRow {
  id: string;
  conversation_id: string;
  user_id: string;
  status: TurnStatus;
  input: unknown;
  options: TurnOptions;
  idempotency_key: string | null;
  request_hash: string | null;
  attempt: number;
  provider_retries: number;
  last_error: Turn['lastError'];
  retry_at: Date | null;
  step: number;
  finish_reason: string | null;
  error: Turn['error'];
  usage: Usage;
  steps: StepRecord[];
  awaiting: Turn['awaiting'];
  running_job: string | null;
  batch_priority: number | null;
  end_events: EventPayload[] | null;
  traceparent: string | null;
  branch: BranchKind | null;
  from_message_id: string | number | null;
  superseded_by: string | null;
  ui_message_id: string | null;
  key_id: string | null;
  agent_id: string | null;
  agent_version: number | null;
  created_at: Date;
  started_at: Date | null;
  finished_at: Date | null;
  output: unknown;
}

/** Whose budget: a user's or an API key's. */
export interface BudgetSubject {
  scope: 'user' | 'key';
  id: string;
}

export interface NewTurn {
  conversationId: string;
  userId: string;
  input: unknown;
  options: TurnOptions;
  idempotencyKey?: string;
  requestHash: string;
  batchPriority?: number;
  traceparent?: string;
  /** A regenerate (its input is null: it writes no user message) or an edit, from this message (row id). */
  branch?: { kind: BranchKind; fromMessageId: string };
  uiMessageId?: string;
  /** The API key that admitted it: its budget counts the turn's calls too. */
  keyId?: string;
  /** The turn's own agent (absent: its conversation's, if any); a version left null is the latest (migration 0040). */
  agent?: { agentId: string; agentVersion: number | null };
}

const INSERT_COLUMNS =
  '(id, conversation_id, user_id, status, input, options, idempotency_key, request_hash, batch_priority, traceparent, branch, from_message_id, ui_message_id, key_id, agent_id, agent_version)';
const INSERT_VALUES = "($1, $2, $3, 'queued', $4, $5, $6, $7, $8, $9, $10, $11::bigint, $12, $13, $14, $15::int)";

/** A step recorded with the turn's running totals ($1 id, $2 attempt, $3–$7 from {@link recordStepParams}). */
const RECORD_STEP = `step = $3, steps = steps || $4::jsonb,
  usage = jsonb_build_object(
    'promptTokens', (usage->>'promptTokens')::int + $5::int,
    'completionTokens', (usage->>'completionTokens')::int + $6::int,
    'totalTokens', (usage->>'totalTokens')::int + $7::int)`;
/** The attempt still runs the turn, and the step is the next one. */
const STEP_OWNED = "id = $1 AND attempt = $2 AND status = 'running' AND step = $3 - 1";
const recordStepParams = (id: string, attempt: number, record: StepRecord): unknown[] => [
  id,
  attempt,
  record.step,
  JSON.stringify([record]),
  record.usage.promptTokens,
  record.usage.completionTokens,
  record.usage.totalTokens,
];

/** What starting a conversation's next turn needs of it. */
export type NextTurn = Pick<Turn, 'id' | 'conversationId' | 'userId' | 'retryAt' | 'batchPriority' | 'traceparent'>;

/** A turn row as `to_jsonb` writes it: its timestamps are text. */
type JsonTurnRow = Omit<TurnRow, 'retry_at' | 'created_at' | 'started_at' | 'finished_at'> & Record<'retry_at' | 'created_at' | 'started_at' | 'finished_at', string | null>;

function fromJsonRow(row: JsonTurnRow): TurnRow {
  return {
    ...row,
    retry_at: dateFromJson(row.retry_at),
    created_at: new Date(row.created_at!),
    started_at: dateFromJson(row.started_at),
    finished_at: dateFromJson(row.finished_at),
  };
}

/** The statuses of an unfinished turn, as an SQL list (the partial indexes of migration 0001 and `admit_turn_if_clear` of 0020 spell it the same). */
export const ACTIVE_SQL = `('queued', 'running', 'waiting_tools')`;

/** What {@link TurnsRepository.admitIfClear} did. */
export type ClearAdmission =
  | { outcome: 'admitted'; turn: Turn; activeOfUser: number }
  /** No such conversation of this user. */
  | { outcome: 'missing' }
  /** Something may stand in the way (a turn active, the key used, the user at the limit): decide in a transaction. */
  | { outcome: 'not_clear' };

/**
 * Written by {@link TurnsRepository.admitIfClear} in the statement that admits the turn, so both
 * or neither: a schedule's run of one tick (migrations/0076_admit_scheduled_turn.sql). The tick
 * that has its run already fails the statement (the run row is unique), the turn with it.
 */
export interface ScheduleRunRecord {
  kind: 'schedule_run';
  runId: string;
  scheduleId: string;
  scheduledFor: Date;
}

/**
 * Turn rows. Writes made by a worker are fenced by the attempt number they started with: a
 * stale worker (its lock lost, another worker now on the turn) matches no row and stops.
 */
export class TurnsRepository {
  constructor(
    private readonly db: Queryable,
    private readonly generateId: () => string = () => `turn_${randomUUID()}`,
  ) {}

  async insert(input: NewTurn, db: Queryable = this.db): Promise<Turn> {
    const { rows } = await db.query<TurnRow>(`INSERT INTO turns ${INSERT_COLUMNS} VALUES ${INSERT_VALUES} RETURNING *`, this.insertParams(input));
    return toTurn(rows[0]!);
  }

  /**
   * Admission's common case in one round trip: inserts the turn only when its conversation has
   * no unfinished turn, its idempotency key is unused there, its path does not end with calls
   * that have no results, and its user has fewer than `maxActiveOfUser` unfinished turns (then
   * `activeOfUser` is that count), all under the conversation's row lock, in one call of
   * `admit_turn_if_clear` (migrations 0020, 0023, 0033). Not for a
   * branch turn: what it replaces is marked in the same transaction (TurnService). `record` is
   * written with an admitted turn, in the same statement (admit_scheduled_turn_if_clear, 0076).
   */
  async admitIfClear(input: NewTurn, maxActiveOfUser: number, record?: ScheduleRunRecord): Promise<ClearAdmission> {
    const { rows } = await this.db.query<TurnRow & { outcome: ClearAdmission['outcome']; active_of_user: number | null }>(
      record
        ? `SELECT a.outcome, a.active_of_user, (a.turn).*
             FROM admit_scheduled_turn_if_clear($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11::bigint, $12, $13, $14, $15::int, $16, $17, $18, $19::timestamptz) a`
        : `SELECT a.outcome, a.active_of_user, (a.turn).*
             FROM admit_turn_if_clear($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11::bigint, $12, $13, $14, $15::int, $16) a`,
      [...this.insertParams(input), maxActiveOfUser, ...(record ? [record.runId, record.scheduleId, record.scheduledFor] : [])],
    );
    const row = rows[0]!;
    if (row.outcome !== 'admitted') return { outcome: row.outcome };
    return { outcome: 'admitted', turn: toTurn(row), activeOfUser: row.active_of_user ?? 0 };
  }

  private insertParams(input: NewTurn): unknown[] {
    return [
      this.generateId(),
      input.conversationId,
      input.userId,
      JSON.stringify(input.input),
      JSON.stringify(input.options),
      input.idempotencyKey ?? null,
      input.requestHash,
      input.batchPriority ?? null,
      input.traceparent ?? null,
      input.branch?.kind ?? null,
      input.branch?.fromMessageId ?? null,
      input.uiMessageId ?? null,
      input.keyId ?? null,
      input.agent?.agentId ?? null,
      input.agent?.agentVersion ?? null,
    ];
  }

  async get(id: string, db: Queryable = this.db): Promise<Turn | null> {
    const { rows } = await db.query<TurnRow>('SELECT * FROM turns WHERE id = $1', [id]);
    return rows[0] ? toTurn(rows[0]) : null;
  }

  async getForUser(userId: string, id: string): Promise<Turn | null> {
    const { rows } = await this.db.query<TurnRow>('SELECT * FROM turns WHERE id = $1 AND user_id = $2', [id, userId]);
    return rows[0] ? toTurn(rows[0]) : null;
  }

  async findByIdempotencyKey(conversationId: string, key: string, db: Queryable = this.db): Promise<Turn | null> {
    const { rows } = await db.query<TurnRow>('SELECT * FROM turns WHERE conversation_id = $1 AND idempotency_key = $2', [conversationId, key]);
    return rows[0] ? toTurn(rows[0]) : null;
  }

  /** Every turn of a conversation, oldest first. */
  async listForConversation(conversationId: string, db: Queryable = this.db): Promise<Turn[]> {
    const { rows } = await db.query<TurnRow>('SELECT * FROM turns WHERE conversation_id = $1 ORDER BY ordinal', [conversationId]);
    return rows.map(toTurn);
  }

  /** Whether the turn's conversation has a turn made after it. */
  async hasLaterTurn(turn: Pick<Turn, 'id' | 'conversationId'>, db: Queryable = this.db): Promise<boolean> {
    const { rows } = await db.query<{ later: boolean }>(
      'SELECT EXISTS (SELECT 1 FROM turns WHERE conversation_id = $1 AND ordinal > (SELECT ordinal FROM turns WHERE id = $2)) AS later',
      [turn.conversationId, turn.id],
    );
    return rows[0]!.later;
  }

  /** Unfinished turns of a conversation, oldest first: the first one is the one that may run. */
  async activeTurns(conversationId: string, db: Queryable = this.db): Promise<Turn[]> {
    const { rows } = await db.query<TurnRow>(`SELECT * FROM turns WHERE conversation_id = $1 AND status IN ${ACTIVE_SQL} ORDER BY ordinal`, [conversationId]);
    return rows.map(toTurn);
  }

  /**
   * Takes the turn for the queue job `jobId`, in one statement (it runs once per job). A turn
   * is taken only while it is unfinished and first in its conversation (a later turn is started
   * by the end of the one before it). A turn that was `waiting_tools` continues its attempt;
   * one that was `queued` (new, or waiting out a provider retry) or `running` under this same
   * job (its worker died and the job came back as stalled) starts a new attempt. A turn running
   * under another job is not taken: two jobs of one turn (a redelivered start and its flow's
   * continuation) would otherwise run it side by side. A new attempt also records the turn's
   * user message, once: written when the turn starts, not when it is posted, it follows the
   * messages of the turns before it. The returned attempt fences every later write of this run.
   * `readHistory` also returns the history its first step sends (see {@link BegunAttempt}),
   * saving a round trip before the first token.
   */
  async beginAttempt(id: string, jobId: string, readHistory = false, db: Queryable = this.db): Promise<BegunAttempt | null> {
    const { rows } = await db.query<BegunRow>(
      `WITH target AS (
         SELECT t.id, t.status AS previous_status, t.awaiting AS previous_awaiting FROM turns t
         WHERE t.id = $1 AND t.status IN ${ACTIVE_SQL}
           AND NOT (t.status = 'running' AND t.running_job IS NOT NULL AND t.running_job <> $2)
           AND NOT EXISTS (SELECT 1 FROM turns e WHERE e.conversation_id = t.conversation_id
                           AND e.status IN ${ACTIVE_SQL} AND e.ordinal < t.ordinal)
         FOR UPDATE
       ), begun AS (
         UPDATE turns SET
           attempt = CASE WHEN turns.status = 'waiting_tools' THEN turns.attempt ELSE turns.attempt + 1 END,
           status = 'running', awaiting = NULL, running_job = $2, started_at = COALESCE(turns.started_at, clock_timestamp())
         FROM target WHERE turns.id = target.id
         RETURNING turns.*, target.previous_status, target.previous_awaiting
       ), user_message AS (
         INSERT INTO messages (conversation_id, turn_id, step, role, content)
         SELECT conversation_id, id, 0, 'user', input FROM begun WHERE previous_status <> 'waiting_tools' AND branch IS DISTINCT FROM 'regenerate' AND begun.options->'compact' IS NULL
         ON CONFLICT (turn_id, step, role) WHERE role IN ('user', 'assistant') DO NOTHING
         RETURNING ${MESSAGE_COLUMNS}
       ), branched_from AS (
         -- A branch turn that starts: what turns that ran ahead of it (onBusy enqueue) wrote after
         -- its branch point is on the branch it replaces (admission marked what was there then).
         SELECT begun.id, begun.conversation_id, begun.branch, begun.from_message_id, begun.ordinal, point.turn_id AS point_turn_id
         FROM begun JOIN messages point ON point.id = begun.from_message_id
         WHERE begun.previous_status <> 'waiting_tools'
       ), superseded_messages AS (
         -- Scalar subqueries (null for every other turn) keep both updates on their indexes,
         -- whatever the planner thinks of a join with an empty relation.
         UPDATE messages SET superseded_by = (SELECT id FROM branched_from)
         WHERE messages.conversation_id = (SELECT conversation_id FROM branched_from) AND messages.superseded_by IS NULL
           AND messages.id >= (SELECT from_message_id FROM branched_from) AND messages.turn_id IS DISTINCT FROM (SELECT id FROM branched_from)
           AND (messages.id > (SELECT from_message_id FROM branched_from) OR (SELECT branch FROM branched_from) = 'edit')
       ), superseded_turns AS (
         UPDATE turns SET superseded_by = (SELECT id FROM branched_from)
         WHERE turns.conversation_id = (SELECT conversation_id FROM branched_from) AND turns.superseded_by IS NULL
           AND turns.ordinal < (SELECT ordinal FROM branched_from)
           AND turns.ordinal >= (SELECT p.ordinal FROM turns p WHERE p.id = (SELECT point_turn_id FROM branched_from))
           AND (turns.ordinal > (SELECT p.ordinal FROM turns p WHERE p.id = (SELECT point_turn_id FROM branched_from)) OR (SELECT branch FROM branched_from) = 'edit')
       ), step_calls AS (
         SELECT c.* FROM tool_calls c JOIN begun ON c.turn_id = begun.id AND c.step = begun.step
       ), phase AS (
         SELECT NOT EXISTS (SELECT 1 FROM step_calls WHERE message IS NULL) AS settled,
                EXISTS (SELECT 1 FROM messages m JOIN begun ON m.turn_id = begun.id AND m.step = begun.step AND m.role = 'tool') AS written
       ), tool_messages AS (
         -- The step's tool phase completes in the take when every call has its outcome.
         ${insertToolMessagesFrom('step_calls', 'AND (SELECT settled FROM phase)')}
         RETURNING ${MESSAGE_COLUMNS}
       ), summary AS (
         -- The latest compaction whose last message stays on the path, by the history's own
         -- condition below (the statement does not see the marks it makes).
         SELECT c.summary, c.up_to_message_id FROM compactions c JOIN begun ON c.conversation_id = begun.conversation_id JOIN messages m ON m.id = c.up_to_message_id
         WHERE m.superseded_by IS NULL AND (begun.from_message_id IS NULL OR m.id < begun.from_message_id OR m.turn_id = begun.id
           OR (begun.branch = 'regenerate' AND m.id = begun.from_message_id))
         ORDER BY c.up_to_message_id DESC, c.created_at DESC LIMIT 1
       ), history AS (
         -- The statement does not see its own writes: a new user message and new tool messages
         -- come from RETURNING, those written by an earlier run are in the table, and what it
         -- marks as replaced is left out here by the same condition that marks it. From the
         -- latest summary on, as a row comparison: it keeps the read on the path's (conversation,
         -- id) index, where a bare "id >" bound lets the planner walk the primary key from the
         -- bound through every conversation's later messages.
         SELECT m.id, m.role, m.content, m.tool_calls, m.tool_call_id, m.turn_id, m.superseded_by, m.incomplete, m.reasoning FROM messages m JOIN begun ON m.conversation_id = begun.conversation_id
         WHERE m.superseded_by IS NULL AND (m.conversation_id, m.id) > (begun.conversation_id, COALESCE((SELECT s.up_to_message_id FROM summary s), 0))
           AND (begun.from_message_id IS NULL OR m.id < begun.from_message_id OR m.turn_id = begun.id
           OR (begun.branch = 'regenerate' AND m.id = begun.from_message_id))
         UNION ALL SELECT * FROM user_message
         UNION ALL SELECT * FROM tool_messages
       )
       SELECT begun.*, c.system AS conversation_system, c.model AS conversation_model,
              c.tools AS conversation_tools, c.require_approval AS conversation_require_approval, c.compaction AS conversation_compaction,
              c.model_settings AS conversation_model_settings, c.response_format AS conversation_response_format, u.allowed_tools AS user_allowed_tools,
              (SELECT av.config FROM agent_versions av WHERE av.agent_id = begun.agent_id AND av.version = begun.agent_version) AS agent_config,
              CASE WHEN $3::boolean AND begun.options->'maxHistoryMessages' IS NULL AND (begun.step = 0 OR (SELECT settled FROM phase)) THEN
                (SELECT coalesce(json_agg(json_build_object('id', h.id, 'role', h.role, 'content', h.content, 'tool_calls', h.tool_calls,
                   'tool_call_id', h.tool_call_id, 'turn_id', h.turn_id) ORDER BY h.id), '[]') FROM history h)
              END AS history,
              (SELECT json_build_object('summary', s.summary, 'upToRowId', s.up_to_message_id::text) FROM summary s) AS summary,
              CASE WHEN begun.step > 0 THEN (SELECT coalesce(json_agg(s ORDER BY s.position), '[]') FROM step_calls s) END AS step_calls,
              (SELECT written FROM phase) AS tool_messages_written,
              EXISTS (SELECT 1 FROM tool_messages) AS tool_messages_written_here,
              CASE WHEN begun.step > 0 THEN ARRAY(SELECT tool_call_id FROM tool_calls WHERE turn_id = begun.id) END AS tool_call_ids
       FROM begun JOIN conversations c ON c.id = begun.conversation_id JOIN users u ON u.id = begun.user_id`,
      [id, jobId, readHistory],
    );
    const row = rows[0];
    if (!row) return null;
    return {
      turn: toTurn(row),
      restarted: row.previous_status !== 'waiting_tools',
      previous: { status: row.previous_status, awaiting: row.previous_awaiting },
      conversation: {
        system: row.conversation_system,
        model: row.conversation_model,
        tools: row.conversation_tools,
        requireApproval: row.conversation_require_approval,
        compaction: row.conversation_compaction,
        modelSettings: row.conversation_model_settings,
        responseFormat: row.conversation_response_format,
      },
      userAllowedTools: row.user_allowed_tools,
      agent: row.agent_config,
      summary: row.summary,
      ...(row.history ? { history: row.history.map(toStoredMessage) } : {}),
      ...(row.step_calls
        ? {
            lastStep: {
              calls: row.step_calls.map(toolCallFromJson),
              toolMessagesWritten: row.tool_messages_written,
              toolMessagesWrittenHere: row.tool_messages_written_here,
            },
            toolCallIds: row.tool_call_ids ?? [],
          }
        : {}),
    };
  }

  /**
   * Marks what a branch turn replaces, with that turn's id, in the transaction that admits it:
   * the messages after `point` (and `point` itself for an edit), and the ended turns after the
   * point's turn (and that turn for an edit). A turn still unfinished ahead of the branch turn
   * (onBusy enqueue) keeps its messages until the branch turn starts ({@link beginAttempt}):
   * it goes on reading them meanwhile. One statement.
   */
  async supersede(conversationId: string, point: BranchPoint, branch: BranchKind, byTurnId: string, db: Queryable = this.db): Promise<void> {
    await db.query(
      // A data-modifying WITH runs whether or not the statement reads it.
      `WITH marked AS (
         UPDATE messages SET superseded_by = $3
         WHERE conversation_id = $1 AND superseded_by IS NULL AND (id > $2 OR ($5 = 'edit' AND id = $2))
           AND NOT EXISTS (SELECT 1 FROM turns a WHERE a.id = messages.turn_id AND a.status IN ${ACTIVE_SQL})
       )
       UPDATE turns SET superseded_by = $3
       WHERE conversation_id = $1 AND superseded_by IS NULL AND id <> $3 AND status NOT IN ${ACTIVE_SQL}
         AND (ordinal > (SELECT ordinal FROM turns WHERE id = $4) OR ($5 = 'edit' AND id = $4))`,
      [conversationId, point.messageId, byTurnId, point.turnId, branch],
    );
  }

  /** The reconciler found no job left that runs the turn: the next job may take it. */
  async releaseRunningJob(id: string, jobId: string | null, db: Queryable = this.db): Promise<void> {
    await db.query(`UPDATE turns SET running_job = NULL WHERE id = $1 AND status = 'running' AND running_job IS NOT DISTINCT FROM $2`, [id, jobId]);
  }

  /**
   * The tool phase completed by the attempt that started it, its calls run by this process's
   * local tool slots: when every call of the step has its outcome and the turn still waits for
   * them under this attempt and this job, the turn runs again (same attempt) and the step's tool
   * messages are written, in one statement. A job that took the turn meanwhile (this one's lock
   * lost) holds it: then this returns null and that job goes on with the turn.
   */
  async resumeAfterLocalTools(id: string, attempt: number, jobId: string, step: number): Promise<{ results: number; failed: number } | null> {
    const calls = '(SELECT * FROM tool_calls WHERE turn_id = $1 AND step = $4) AS calls';
    const { rows } = await this.db.query<{ resumed: boolean; results: number; failed: number }>(
      `WITH resumed AS (
         UPDATE turns SET status = 'running', awaiting = NULL
         WHERE id = $1 AND attempt = $2 AND running_job = $3 AND step = $4 AND status = 'waiting_tools'
           AND NOT EXISTS (SELECT 1 FROM tool_calls WHERE turn_id = $1 AND step = $4 AND message IS NULL)
         RETURNING id
       ), inserted AS (${insertToolMessagesFrom(calls, 'AND EXISTS (SELECT 1 FROM resumed)')} RETURNING 1)
       SELECT EXISTS (SELECT 1 FROM resumed) AS resumed,
              (SELECT count(*)::int FROM tool_calls WHERE turn_id = $1 AND step = $4) AS results,
              (SELECT count(*)::int FROM tool_calls WHERE turn_id = $1 AND step = $4 AND status <> 'succeeded') AS failed`,
      [id, attempt, jobId, step],
    );
    const row = rows[0]!;
    return row.resumed ? { results: row.results, failed: row.failed } : null;
  }

  /** Parks the turn while its tools run or its client tools are unanswered. */
  async setWaiting(id: string, attempt: number, awaiting: NonNullable<Turn['awaiting']>, db: Queryable = this.db): Promise<boolean> {
    const { rows } = await db.query(
      `UPDATE turns SET status = 'waiting_tools', awaiting = $3
       WHERE id = $1 AND attempt = $2 AND status IN ('running', 'waiting_tools') RETURNING id`,
      [id, attempt, awaiting],
    );
    return rows.length > 0;
  }

  /**
   * Records a finished step and the turn's running totals. False when the attempt was fenced off.
   * `parkForTools`: the step's calls go out as tool jobs, and the turn waits for them from this
   * commit on (a round trip less than parking it after).
   */
  async commitStep(id: string, attempt: number, record: StepRecord, parkForTools = false, db: Queryable = this.db): Promise<boolean> {
    const { rows } = await db.query(
      `UPDATE turns SET ${RECORD_STEP},
         status = CASE WHEN $8::boolean THEN 'waiting_tools' ELSE status END,
         awaiting = CASE WHEN $8::boolean THEN 'tools' ELSE awaiting END
       WHERE ${STEP_OWNED} RETURNING id`,
      [...recordStepParams(id, attempt, record), parkForTools],
    );
    return rows.length > 0;
  }

  /**
   * A turn's common end in one round trip: the conversation's seq floor raised to `seenSeq`
   * (which takes its row lock, as admission does), its last step (which called no tools)
   * recorded with its assistant message, the turn completed with `endEvents`, and the
   * conversation's next unfinished turn read after the lock was had (see migration 0010). Null
   * when the attempt no longer owns the turn.
   */
  /** A structured-output turn's validated answer, written in the transaction that ends the turn. */
  async setOutput(id: string, output: unknown, db: Queryable = this.db): Promise<void> {
    await db.query('UPDATE turns SET output = $2 WHERE id = $1', [id, JSON.stringify(output)]);
  }

  async completeWithFinalStep(
    id: string,
    attempt: number,
    step: { record: StepRecord; content: string | null },
    end: { finishReason: string; endEvents: EventPayload[]; seenSeq: number },
    db: Queryable = this.db,
  ): Promise<{ ended: Turn; next: NextTurn | null } | null> {
    const { rows } = await db.query<{ result: { ended: JsonTurnRow; next: JsonTurnRow | null } | null }>(
      'SELECT complete_turn_with_final_step($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11) AS result',
      [...recordStepParams(id, attempt, step.record), end.finishReason, JSON.stringify(end.endEvents), JSON.stringify(step.content), end.seenSeq],
    );
    const result = rows[0]?.result;
    if (!result) return null;
    const ended = toTurn(fromJsonRow(result.ended));
    const next = result.next && toTurn(fromJsonRow(result.next));
    return {
      ended,
      next: next && {
        id: next.id,
        conversationId: next.conversationId,
        userId: next.userId,
        retryAt: next.retryAt,
        batchPriority: next.batchPriority,
        traceparent: next.traceparent,
      },
    };
  }

  /**
   * Puts the turn back to `queued` to wait out a provider failure, counting the retry. The
   * count lives here, not in the job, so that a job Redis lost and the reconciler re-created
   * cannot retry without bound.
   */
  async scheduleRetry(id: string, attempt: number, error: { code: string; message: string }, delayMs: number, db: Queryable = this.db): Promise<boolean> {
    const { rows } = await db.query(
      `UPDATE turns SET status = 'queued', provider_retries = provider_retries + 1,
         retry_at = clock_timestamp() + make_interval(secs => $5::double precision / 1000),
         last_error = jsonb_build_object('code', $3::text, 'message', $4::text, 'at', to_char(clock_timestamp() AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'))
       WHERE id = $1 AND attempt = $2 AND status = 'running' RETURNING id`,
      [id, attempt, error.code, error.message, delayMs],
    );
    return rows.length > 0;
  }

  /**
   * Parks the turn between two steps for a `pause` budget: `queued` again (it still counts as
   * active), awaiting the budget, its job delayed until `wakeAt` (null: none is known), and the
   * job kept in `running_job` for a raised budget to wake it.
   */
  async parkForBudget(id: string, attempt: number, wakeAt: Date | null, db: Queryable = this.db): Promise<boolean> {
    const { rows } = await db.query(`UPDATE turns SET status = 'queued', awaiting = 'budget', retry_at = $3 WHERE id = $1 AND attempt = $2 AND status = 'running' RETURNING id`, [
      id,
      attempt,
      wakeAt,
    ]);
    return rows.length > 0;
  }

  /** A user's (or a key's) turns parked for a budget, with their jobs, told to wait no longer. */
  async releaseBudgetWaits(subject: BudgetSubject, db: Queryable = this.db): Promise<Turn[]> {
    const column = subject.scope === 'user' ? 'user_id' : 'key_id';
    const { rows } = await db.query<TurnRow>(`UPDATE turns SET retry_at = NULL WHERE ${column} = $1 AND status = 'queued' AND awaiting = 'budget' RETURNING *`, [subject.id]);
    return rows.map(toTurn);
  }

  /** Ends the turn. `attempt` null ends it whoever runs it (cancel from the API). */
  async finish(
    id: string,
    attempt: number | null,
    outcome: { status: 'completed' | 'failed' | 'cancelled'; finishReason?: string; error?: { code: string; message: string } },
    endEvents: EventPayload[],
    db: Queryable = this.db,
  ): Promise<Turn | null> {
    const { rows } = await db.query<TurnRow>(
      `UPDATE turns SET status = $3, finish_reason = $4, error = $5, end_events = $6, finished_at = clock_timestamp()
       WHERE id = $1 AND ($2::int IS NULL OR attempt = $2::int) AND status IN ${ACTIVE_SQL} RETURNING *`,
      [id, attempt, outcome.status, outcome.finishReason ?? null, outcome.error ? JSON.stringify(outcome.error) : null, JSON.stringify(endEvents)],
    );
    return rows[0] ? toTurn(rows[0]) : null;
  }

  /**
   * For the reconciler: unfinished turns that are first in their conversation (the ones that
   * should have a job now), oldest first, a page at a time after `afterOrdinal`.
   */
  async runnable(afterOrdinal: string, limit: number, db: Queryable = this.db): Promise<{ turns: Turn[]; lastOrdinal: string | null }> {
    const { rows } = await db.query<TurnRow & { ordinal: string | number }>(
      `SELECT t.* FROM turns t
       WHERE t.status IN ${ACTIVE_SQL} AND t.ordinal > $1
         AND NOT EXISTS (SELECT 1 FROM turns e WHERE e.conversation_id = t.conversation_id
                           AND e.status IN ${ACTIVE_SQL} AND e.ordinal < t.ordinal)
       ORDER BY t.ordinal LIMIT $2`,
      [afterOrdinal, limit],
    );
    const last = rows[rows.length - 1];
    return { turns: rows.map(toTurn), lastOrdinal: last ? String(last.ordinal) : null };
  }

  async countActiveForUser(userId: string, db: Queryable = this.db): Promise<number> {
    const { rows } = await db.query<{ count: string | number }>(`SELECT count(*) AS count FROM turns WHERE user_id = $1 AND status IN ${ACTIVE_SQL}`, [userId]);
    return Number(rows[0]?.count ?? 0);
  }
}

function toTurn(row: TurnRow): Turn {
  return {
    id: row.id,
    conversationId: row.conversation_id,
    userId: row.user_id,
    status: row.status,
    input: row.input,
    options: row.options,
    idempotencyKey: row.idempotency_key,
    requestHash: row.request_hash,
    attempt: row.attempt,
    providerRetries: row.provider_retries,
    lastError: row.last_error,
    retryAt: row.retry_at?.toISOString() ?? null,
    step: row.step,
    finishReason: row.finish_reason,
    error: row.error,
    usage: row.usage,
    steps: row.steps,
    awaiting: row.awaiting,
    runningJob: row.running_job,
    batchPriority: row.batch_priority,
    endEvents: row.end_events,
    traceparent: row.traceparent,
    branch: row.branch && row.from_message_id !== null ? { kind: row.branch, fromMessageId: String(row.from_message_id) } : null,
    supersededBy: row.superseded_by,
    uiMessageId: row.ui_message_id,
    keyId: row.key_id ?? null,
    agentId: row.agent_id,
    agentVersion: row.agent_version,
    createdAt: row.created_at.toISOString(),
    startedAt: row.started_at?.toISOString() ?? null,
    finishedAt: row.finished_at?.toISOString() ?? null,
    ...(row.output !== null && row.output !== undefined ? { output: row.output } : {}),
  };
}
