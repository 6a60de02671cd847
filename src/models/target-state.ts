/**
 * A target's health as every process of the deployment shares it (in Redis). A target with no
 * state is healthy. Pure decisions over it live here; the reads and writes in target-cooldowns.ts.
 */
export interface TargetState {
  /** Epoch ms: until then no step goes to it. */
  coolingUntil: number;
  /** Failures in a row, each after the previous cooldown ended: the cooldown doubles with each. */
  failures: number;
  /** Epoch ms: a step probes it (its cooldown ended) until then; others pass it over meanwhile. */
  probeUntil?: number;
}

/** What routing does with a target: send the step, send it as the one probe after a cooldown, or pass it over. */
export type TargetUse = 'use' | 'probe' | 'pass';

export function targetUse(state: TargetState | null, now: number): TargetUse {
  if (!state) return 'use';
  if (now < state.coolingUntil) return 'pass';
  if (state.probeUntil !== undefined && now < state.probeUntil) return 'pass';
  return 'probe';
}

/** How GET /v1/models shows a target: cooling down until when, while no request may go to it. */
export function shownState(state: TargetState | null, now: number): { state: 'ok' } | { state: 'cooling_down'; until: string } {
  if (!state || now >= state.coolingUntil) return { state: 'ok' };
  return { state: 'cooling_down', until: new Date(state.coolingUntil).toISOString() };
}
