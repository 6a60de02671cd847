import type { InflightSnapshot } from '../event-log/inflight-state';
import type { ProviderCall } from '../store/provider-calls-repository';
import { costOf } from './call-cost';

/**
 * The ledger line of a call whose worker died while it streamed: the provider billed it, the
 * dead worker never wrote it, so the next attempt does, from the in-flight marker's count
 * (estimated). Under the call's own id: written again by any later attempt, it stays one line.
 */
export function lostCallLine(marker: InflightSnapshot, turn: { id: string; conversationId: string; userId: string }, endedAt: Date): ProviderCall | null {
  const call = marker.call;
  if (!call) return null;
  const tokens = { promptTokens: call.promptTokens, cachedPromptTokens: 0, completionTokens: call.completionTokens, reasoningTokens: 0 };
  return {
    id: call.id,
    turnId: turn.id,
    kind: call.kind ?? 'step',
    step: marker.step,
    attempt: marker.attempt,
    provider: call.provider,
    model: call.model,
    startedAt: call.startedAt,
    endedAt: endedAt.toISOString(),
    outcome: 'discarded',
    error: { code: 'worker_lost', message: 'the worker streaming this call stopped before it ended' },
    ledger: { userId: turn.userId, conversationId: turn.conversationId, ...tokens, ...costOf(tokens, call.price), estimated: true },
  };
}
