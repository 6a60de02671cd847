import type { Queryable } from './db';
import type { Usage } from '../events/event';

/** `ok`: its step was taken; `failed`: it failed before any output; `discarded`: its output was dropped (the stream broke, the worker died). */
export type ProviderCallOutcome = 'ok' | 'failed' | 'discarded';

/** One request a turn sent a provider (docs/API.md, `providerCalls`). */
export interface ProviderCall {
  id: string;
  turnId: string;
  kind: 'step';
  step: number;
  attempt: number;
  provider: string;
  model: string;
  startedAt: string;
  endedAt: string;
  outcome: ProviderCallOutcome;
  error?: { code: string; message: string };
  usage?: Usage;
}

interface ProviderCallRow {
  id: string;
  turn_id: string;
  kind: 'step';
  step: number;
  attempt: number;
  provider: string;
  model: string;
  started_at: Date | string;
  ended_at: Date | string;
  outcome: ProviderCallOutcome;
  error: { code: string; message: string } | null;
  usage: Usage | null;
}

export class ProviderCallsRepository {
  constructor(private readonly db: Queryable) {}

  /** Records a request that ended; the same id twice (a job run again) keeps the first. */
  async insert(call: ProviderCall, db: Queryable = this.db): Promise<void> {
    await db.query(
      `INSERT INTO provider_calls (id, turn_id, kind, step, attempt, provider, model, started_at, ended_at, outcome, error, usage)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12) ON CONFLICT (id) DO NOTHING`,
      [
        call.id,
        call.turnId,
        call.kind,
        call.step,
        call.attempt,
        call.provider,
        call.model,
        call.startedAt,
        call.endedAt,
        call.outcome,
        call.error ? JSON.stringify(call.error) : null,
        call.usage ? JSON.stringify(call.usage) : null,
      ],
    );
  }

  /** A turn's requests, in the order they were sent. */
  async listForTurn(turnId: string): Promise<ProviderCall[]> {
    const { rows } = await this.db.query<ProviderCallRow>('SELECT * FROM provider_calls WHERE turn_id = $1 ORDER BY started_at, id', [turnId]);
    return rows.map((row) => ({
      id: row.id,
      turnId: row.turn_id,
      kind: row.kind,
      step: row.step,
      attempt: row.attempt,
      provider: row.provider,
      model: row.model,
      startedAt: new Date(row.started_at).toISOString(),
      endedAt: new Date(row.ended_at).toISOString(),
      outcome: row.outcome,
      ...(row.error ? { error: row.error } : {}),
      ...(row.usage ? { usage: row.usage } : {}),
    }));
  }
}
