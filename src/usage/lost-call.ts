import type { InflightSnapshot } from '../event-log/inflight-state';
import type { ProviderCall } from '../store/provider-calls-repository';
import { callRecord } from './call-record';

/**
 * The ledger line of a call whose worker died while it streamed: the provider billed it, the
 * dead worker never wrote it, so the next attempt does, from the in-flight marker's count
 * (estimated). Under the call's own id: written again by any later attempt, it stays one line.
 */
export function lostCallLine(marker: InflightSnapshot, turn: { id: string; conversationId: string; userId: string }, endedAt: Date): ProviderCall | null {
  const call = marker.call;
  if (!call) return null;
  return callRecord(
    {
      id: call.id,
      turn,
      kind: call.kind ?? 'step',
      step: marker.step,
      attempt: marker.attempt,
      target: { provider: call.provider, model: call.model, ...(call.price ? { price: call.price } : {}) },
      startedAt: new Date(call.startedAt),
      endedAt,
    },
    {
      outcome: 'discarded',
      error: { code: 'worker_lost', message: 'the worker streaming this call stopped before it ended' },
      counted: { promptTokens: call.promptTokens, completionTokens: call.completionTokens },
    },
  );
}
