import type { ProviderError } from '../providers/provider-error';
import type { Target } from './model-catalogue';

export type FallbackDecision =
  /** We aborted it ourselves: no decision to make. */
  | { kind: 'abandon' }
  /** The target failed as a provider fails (connection, timeout, 429, 5xx, a broken stream): it cools down and the step goes on to the next. */
  | { kind: 'cool-down' }
  /** Too long for this target: the step goes to `index`, the next target with a larger window. */
  | { kind: 'larger-window'; index: number }
  /** Too long for every target left (compaction, where a policy asks for it, comes in here). */
  | { kind: 'context-length-exceeded' }
  /** Any other refusal: no other target is tried, the turn fails naming the provider. */
  | { kind: 'refused' };

/** What a failed provider request means for the step on target `index` of `targets`. Pure. */
export function decideFallback(error: ProviderError, targets: readonly Target[], index: number): FallbackDecision {
  if (error.kind === 'aborted') return { kind: 'abandon' };
  if (error.kind === 'context_length_exceeded') {
    const window = targets[index]?.contextWindow ?? 0;
    const larger = targets.findIndex((target, at) => at > index && (target.contextWindow ?? 0) > window);
    return larger === -1 ? { kind: 'context-length-exceeded' } : { kind: 'larger-window', index: larger };
  }
  return error.retryable ? { kind: 'cool-down' } : { kind: 'refused' };
}
