import type { Queryable } from './db';
import type { Usage } from '../events/event';

/** `ok`: its step was taken; `failed`: it failed before any output; `discarded`: its output was dropped (the stream broke, the worker died). */
export type ProviderCallOutcome = 'ok' | 'failed' | 'discarded';

export type ProviderCallKind = 'step' | 'compaction' | 'repair';

/** One request a turn sent a provider (docs/API.md, `providerCalls`). */
export interface ProviderCall {
  id: string;
  turnId: string;
  /** `compaction`: the summary request made before the step `step` (docs/API.md, "Long conversations"). */
  kind: ProviderCallKind;
  step: number;
  attempt: number;
  provider: string;
  model: string;
  startedAt: string;
  endedAt: string;
  outcome: ProviderCallOutcome;
  error?: { code: string; message: string };
  usage?: Usage;
  /** What the tokenizer counted its request at, where it was counted (to correct later counts by what the provider reported). */
  countedPromptTokens?: number;
  /** Its line of the usage ledger: what the provider billed, counted with a tokenizer when `estimated`. */
  ledger: LedgerLine;
}

/** A call's tokens as the ledger keeps them (docs/API.md, "Usage and budgets"). */
export interface LedgerTokens {
  /** Includes `cachedPromptTokens`, as providers report it. */
  promptTokens: number;
  cachedPromptTokens: number;
  /** Includes `reasoningTokens`. */
  completionTokens: number;
  reasoningTokens: number;
}

/** A call's line of the usage ledger (docs/API.md, "Usage and budgets"). */
export interface LedgerLine extends LedgerTokens {
  userId: string;
  conversationId: string;
  costUsd: number;
  priced: boolean;
  /** Its usage never arrived: counted from what was sent and streamed. */
  estimated: boolean;
}

interface ProviderCallRow {
  id: string;
  turn_id: string;
  kind: ProviderCallKind;
  step: number;
  attempt: number;
  provider: string;
  model: string;
  started_at: Date | string;
  ended_at: Date | string;
  outcome: ProviderCallOutcome;
  error: { code: string; message: string } | null;
  usage: Usage | null;
  user_id: string | null;
  conversation_id: string | null;
  prompt_tokens: number;
  cached_prompt_tokens: number;
  completion_tokens: number;
  reasoning_tokens: number;
  cost_usd: string;
  priced: boolean;
  estimated: boolean;
}

export class ProviderCallsRepository {
  constructor(private readonly db: Queryable) {}

  /**
   * Records a request that ended with its ledger line; the same id twice (a job run again, a later
   * attempt writing the line of a call its dead worker never wrote) keeps the first, so a call is
   * counted once whatever is retried.
   */
  /** False when the call's line was already written (a retried job, a later attempt). */
  async insert(call: ProviderCall, db: Queryable = this.db): Promise<boolean> {
    const { ledger } = call;
    const { rows } = await db.query(
      `INSERT INTO provider_calls (id, turn_id, kind, step, attempt, provider, model, started_at, ended_at, outcome, error, usage,
         user_id, conversation_id, prompt_tokens, cached_prompt_tokens, completion_tokens, reasoning_tokens, cost_usd, priced, estimated, counted_prompt_tokens, key_id, agent_id)
       -- The key and the agent are the turn's: those it was admitted with (migrations/0033, 0035).
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18, $19, $20, $21, $22,
         (SELECT key_id FROM turns WHERE id = $2), (SELECT agent_id FROM turns WHERE id = $2))
       ON CONFLICT (id) DO NOTHING RETURNING 1`,
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
        ledger.userId,
        ledger.conversationId,
        ledger.promptTokens,
        ledger.cachedPromptTokens,
        ledger.completionTokens,
        ledger.reasoningTokens,
        ledger.costUsd,
        ledger.priced,
        ledger.estimated,
        call.countedPromptTokens ?? null,
      ],
    );
    return rows.length > 0;
  }

  /**
   * The conversation's last answered step request that the tokenizer counted: what the provider
   * reported for it beside that count, which corrects the next count.
   */
  async lastCounted(conversationId: string, db: Queryable = this.db): Promise<{ reported: number; counted: number } | null> {
    const { rows } = await db.query<{ prompt_tokens: number; counted_prompt_tokens: number }>(
      `SELECT prompt_tokens, counted_prompt_tokens FROM provider_calls
       WHERE conversation_id = $1 AND kind = 'step' AND outcome = 'ok' AND counted_prompt_tokens IS NOT NULL ORDER BY started_at DESC LIMIT 1`,
      [conversationId],
    );
    return rows[0] ? { reported: rows[0].prompt_tokens, counted: rows[0].counted_prompt_tokens } : null;
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
      ledger: {
        userId: row.user_id ?? '',
        conversationId: row.conversation_id ?? '',
        promptTokens: row.prompt_tokens,
        cachedPromptTokens: row.cached_prompt_tokens,
        completionTokens: row.completion_tokens,
        reasoningTokens: row.reasoning_tokens,
        costUsd: Number(row.cost_usd),
        priced: row.priced,
        estimated: row.estimated,
      },
    }));
  }
}
