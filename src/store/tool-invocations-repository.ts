import { attemptFields, START_ATTEMPT, outcomeColumns, UNSETTLED, type AttemptFields, type AttemptRow, type Outcome } from './attempt-columns';
import type { Queryable } from './db';
import { toStorableJson } from '../storable/storable-text';

export type InvocationStatus = 'pending' | 'running' | 'succeeded' | 'failed';

export interface ToolInvocation extends AttemptFields<InvocationStatus> {
  id: string;
  userId: string;
  toolName: string;
  params: unknown;
  idempotencyKey: string | null;
  requestHash: string;
}

interface InvocationRow extends AttemptRow<InvocationStatus> {
  id: string;
  user_id: string;
  tool_name: string;
  params: unknown;
  idempotency_key: string | null;
  request_hash: string;
}

export class ToolInvocationsRepository {
  constructor(private readonly db: Queryable) {}

  /** Records the invocation, or finds the one already recorded under its id (the same key). */
  async createOrGet(input: Pick<ToolInvocation, 'id' | 'userId' | 'toolName' | 'params' | 'idempotencyKey' | 'requestHash'>): Promise<ToolInvocation> {
    const { rows } = await this.db.query<InvocationRow>(
      `WITH inserted AS (
         INSERT INTO tool_invocations (id, user_id, tool_name, params, idempotency_key, request_hash)
         VALUES ($1, $2, $3, $4, $5, $6) ON CONFLICT (id) DO NOTHING RETURNING *)
       SELECT * FROM inserted UNION ALL SELECT * FROM tool_invocations WHERE id = $1 LIMIT 1`,
      [input.id, input.userId, input.toolName, JSON.stringify(toStorableJson(input.params)), input.idempotencyKey, input.requestHash],
    );
    if (rows[0]) return toInvocation(rows[0]);
    // Inserted by a concurrent request after this statement's snapshot: a new statement sees it.
    const existing = await this.get(input.id);
    if (!existing) throw new Error(`tool invocation ${input.id} neither inserted nor found`);
    return existing;
  }

  async get(id: string): Promise<ToolInvocation | null> {
    const { rows } = await this.db.query<InvocationRow>('SELECT * FROM tool_invocations WHERE id = $1', [id]);
    return rows[0] ? toInvocation(rows[0]) : null;
  }

  /** Counts an execution attempt. Null when it is settled: it must not run again. */
  async markRunning(id: string): Promise<ToolInvocation | null> {
    const { rows } = await this.db.query<InvocationRow>(`UPDATE tool_invocations SET ${START_ATTEMPT} WHERE id = $1 AND status IN ${UNSETTLED} RETURNING *`, [id]);
    return rows[0] ? toInvocation(rows[0]) : null;
  }

  /** Stores the outcome unless one is stored already. */
  async settle(id: string, outcome: Outcome): Promise<ToolInvocation | null> {
    const { rows } = await this.db.query<InvocationRow>(
      `UPDATE tool_invocations SET status = $2, result = $3, error = $4, finished_at = clock_timestamp()
       WHERE id = $1 AND status IN ${UNSETTLED} RETURNING *`,
      [id, outcome.status, ...outcomeColumns(outcome)],
    );
    return rows[0] ? toInvocation(rows[0]) : null;
  }
}

function toInvocation(row: InvocationRow): ToolInvocation {
  return {
    id: row.id,
    userId: row.user_id,
    toolName: row.tool_name,
    params: row.params,
    idempotencyKey: row.idempotency_key,
    requestHash: row.request_hash,
    ...attemptFields(row),
  };
}
