import type { Queryable } from './db';

/** A call's approval: asked for when the step was committed, decided once. */
export interface ToolApproval {
  approvalId: string;
  turnId: string;
  toolCallId: string;
  conversationId: string;
  userId: string;
  toolName: string;
  /** The arguments the model asked with. */
  args: unknown;
  requestedAt: string;
  expiresAt: string;
  /** Null while pending. */
  decision: ApprovalDecision | null;
}

export interface ApprovalDecision {
  approved: boolean;
  reason: string | null;
  /** The arguments a person gave instead; null: the model's run. */
  args: unknown;
  decidedAt: string;
}

export type NewToolApproval = Omit<ToolApproval, 'requestedAt' | 'decision'>;

/** Where the next page of pending approvals starts: before this request. */
export interface ApprovalCursor {
  requestedAt: string;
  approvalId: string;
}

interface ApprovalRow {
  id: string;
  turn_id: string;
  tool_call_id: string;
  conversation_id: string;
  user_id: string;
  tool_name: string;
  args: unknown;
  requested_at: Date;
  expires_at: Date;
  approved: boolean | null;
  reason: string | null;
  decided_args: unknown;
  decided_at: Date | null;
}

export class ToolApprovalsRepository {
  constructor(private readonly db: Queryable) {}

  /** In the step's commit, one statement for its gated calls. Idempotent, as the calls' insert is. */
  async insertMany(approvals: NewToolApproval[], db: Queryable = this.db): Promise<void> {
    if (approvals.length === 0) return;
    await db.query(
      `INSERT INTO tool_approvals (id, turn_id, tool_call_id, conversation_id, user_id, tool_name, args, expires_at)
       SELECT id, turn_id, tool_call_id, conversation_id, user_id, tool_name, args, expires_at
       FROM jsonb_to_recordset($1::jsonb) AS r(id text, turn_id text, tool_call_id text, conversation_id text, user_id text,
            tool_name text, args jsonb, expires_at timestamptz)
       ON CONFLICT (turn_id, tool_call_id) DO NOTHING`,
      [
        JSON.stringify(
          approvals.map((each) => ({
            id: each.approvalId,
            turn_id: each.turnId,
            tool_call_id: each.toolCallId,
            conversation_id: each.conversationId,
            user_id: each.userId,
            tool_name: each.toolName,
            args: each.args ?? null,
            expires_at: each.expiresAt,
          })),
        ),
      ],
    );
  }

  async get(turnId: string, toolCallId: string, db: Queryable = this.db): Promise<ToolApproval | null> {
    const { rows } = await db.query<ApprovalRow>('SELECT * FROM tool_approvals WHERE turn_id = $1 AND tool_call_id = $2', [turnId, toolCallId]);
    return rows[0] ? toApproval(rows[0]) : null;
  }

  /** The approval under its row lock for the rest of `tx`: where two decisions at once serialise. */
  async lock(turnId: string, toolCallId: string, tx: Queryable): Promise<ToolApproval | null> {
    const { rows } = await tx.query<ApprovalRow>('SELECT * FROM tool_approvals WHERE turn_id = $1 AND tool_call_id = $2 FOR UPDATE', [turnId, toolCallId]);
    return rows[0] ? toApproval(rows[0]) : null;
  }

  /** Records the decision of a locked, undecided approval. */
  async decide(approvalId: string, decision: Omit<ApprovalDecision, 'decidedAt'>, tx: Queryable): Promise<ToolApproval> {
    const { rows } = await tx.query<ApprovalRow>(
      `UPDATE tool_approvals SET approved = $2, reason = $3, decided_args = $4, decided_at = clock_timestamp() WHERE id = $1 RETURNING *`,
      [approvalId, decision.approved, decision.reason, decision.args === null || decision.args === undefined ? null : JSON.stringify(decision.args)],
    );
    return toApproval(rows[0]!);
  }

  /** The step's approvals, in the calls' order. */
  async listForStep(turnId: string, step: number, db: Queryable = this.db): Promise<ToolApproval[]> {
    const { rows } = await db.query<ApprovalRow>(
      `SELECT a.* FROM tool_approvals a JOIN tool_calls c ON c.turn_id = a.turn_id AND c.tool_call_id = a.tool_call_id
       WHERE a.turn_id = $1 AND c.step = $2 ORDER BY c.position`,
      [turnId, step],
    );
    return rows.map(toApproval);
  }

  /** The approvals of these turns (a chat's history shows each call's). */
  async listForTurns(turnIds: string[]): Promise<ToolApproval[]> {
    if (turnIds.length === 0) return [];
    const { rows } = await this.db.query<ApprovalRow>('SELECT * FROM tool_approvals WHERE turn_id = ANY($1::text[])', [turnIds]);
    return rows.map(toApproval);
  }

  /**
   * A user's approvals still waiting for a decision, newest first. A call whose turn ended
   * meanwhile (cancelled) no longer waits, whatever its approval says.
   */
  async listPending(
    userId: string,
    page: { limit: number; conversationId?: string; cursor?: ApprovalCursor },
  ): Promise<{ data: ToolApproval[]; nextCursor: ApprovalCursor | null }> {
    const { rows } = await this.db.query<ApprovalRow>(
      `SELECT a.* FROM tool_approvals a JOIN tool_calls c ON c.turn_id = a.turn_id AND c.tool_call_id = a.tool_call_id
       WHERE a.user_id = $1 AND a.decided_at IS NULL AND c.status = 'awaiting_approval'
         AND ($5::text IS NULL OR a.conversation_id = $5)
         AND ($2::timestamptz IS NULL OR (date_trunc('milliseconds', a.requested_at), a.id) < ($2::timestamptz, $3::text))
       ORDER BY date_trunc('milliseconds', a.requested_at) DESC, a.id DESC LIMIT $4`,
      [userId, page.cursor?.requestedAt ?? null, page.cursor?.approvalId ?? null, page.limit + 1, page.conversationId ?? null],
    );
    const data = rows.slice(0, page.limit).map(toApproval);
    const last = data[data.length - 1];
    return { data, nextCursor: rows.length > page.limit && last ? { requestedAt: last.requestedAt, approvalId: last.approvalId } : null };
  }

  /** How many calls wait for a decision now (the pending approvals gauge). */
  async countPending(): Promise<number> {
    const { rows } = await this.db.query<{ count: string }>(
      `SELECT count(*) AS count FROM tool_approvals a JOIN tool_calls c ON c.turn_id = a.turn_id AND c.tool_call_id = a.tool_call_id
       WHERE a.decided_at IS NULL AND c.status = 'awaiting_approval'`,
    );
    return Number(rows[0]?.count ?? 0);
  }
}

function toApproval(row: ApprovalRow): ToolApproval {
  return {
    approvalId: row.id,
    turnId: row.turn_id,
    toolCallId: row.tool_call_id,
    conversationId: row.conversation_id,
    userId: row.user_id,
    toolName: row.tool_name,
    args: row.args,
    requestedAt: row.requested_at.toISOString(),
    expiresAt: row.expires_at.toISOString(),
    decision:
      row.decided_at === null || row.approved === null ? null : { approved: row.approved, reason: row.reason, args: row.decided_args, decidedAt: row.decided_at.toISOString() },
  };
}
