import type { Usage } from '../events/event';
import type { Price } from '../models/models-file-schema';
import type { ProviderCall } from '../store/provider-calls-repository';
import { costOf } from './call-cost';

/** What is known of a provider call whatever its end: whose it is, where it went, when. */
export interface CallFacts {
  id: string;
  turn: { id: string; conversationId: string; userId: string };
  kind: ProviderCall['kind'];
  step: number;
  attempt: number;
  target: { provider: string; model: string; price?: Price };
  startedAt: Date;
  endedAt: Date;
  countedPromptTokens?: number;
}

/** How it ended: with the usage the provider reported, or with an error and what was counted of it (null: nothing). */
export type CallEnd =
  { usage: Usage } | { outcome: 'failed' | 'discarded'; error: { code: string; message: string }; counted: { promptTokens: number; completionTokens: number } | null };

/**
 * A provider call's row and its ledger line, priced at its target's price: the one builder of
 * both for every kind of call (a step's, a repair's, a compaction's). A call cut before its usage
 * came is counted from what was sent and streamed (`estimated`), one refused before any output
 * counts nothing. Cached and reasoning tokens are not read from providers yet: 0.
 */
export function callRecord(facts: CallFacts, end: CallEnd): ProviderCall {
  const reported = 'usage' in end;
  const counted = reported ? end.usage : end.counted;
  const tokens = { promptTokens: counted?.promptTokens ?? 0, cachedPromptTokens: 0, completionTokens: counted?.completionTokens ?? 0, reasoningTokens: 0 };
  return {
    id: facts.id,
    turnId: facts.turn.id,
    kind: facts.kind,
    step: facts.step,
    attempt: facts.attempt,
    provider: facts.target.provider,
    model: facts.target.model,
    startedAt: facts.startedAt.toISOString(),
    endedAt: facts.endedAt.toISOString(),
    outcome: reported ? 'ok' : end.outcome,
    ...(facts.countedPromptTokens !== undefined ? { countedPromptTokens: facts.countedPromptTokens } : {}),
    ...(reported ? { usage: end.usage } : { error: end.error }),
    ledger: {
      userId: facts.turn.userId,
      conversationId: facts.turn.conversationId,
      ...tokens,
      ...costOf(tokens, facts.target.price),
      estimated: !reported && end.counted !== null,
    },
  };
}
