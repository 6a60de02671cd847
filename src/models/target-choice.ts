import type { Target } from './model-catalogue';
import type { TargetCooldowns } from './target-cooldowns';
import { targetUse, type TargetState } from './target-state';

export type TargetChoice =
  /** Send the step there; `probe`: as the one request after its cooldown (its success heals it). */
  | { kind: 'target'; index: number; target: Target; probe: boolean }
  /** Every target left cools down (or is being probed): the soonest is back in `waitMs`. */
  | { kind: 'none'; waitMs: number };

/**
 * The first target of `targets` not in `tried` that is healthy, or whose cooldown ended and
 * whose one probe this step wins. Reads the states once; a probe is claimed in Redis, so one
 * process alone probes. Without Redis the step goes to the first untried target: a cooldown
 * that cannot be read is no reason to refuse a provider that may answer.
 */
export async function chooseTarget(
  cooldowns: Pick<TargetCooldowns, 'read' | 'claimProbe'>,
  targets: readonly Target[],
  tried: ReadonlySet<number>,
  options: { probeMs: (target: Target) => number; now?: () => number; onRedisError?: (error: unknown) => void },
): Promise<TargetChoice> {
  const now = options.now ?? Date.now;
  let states: (TargetState | null)[];
  try {
    states = await cooldowns.read(targets);
  } catch (error) {
    options.onRedisError?.(error);
    states = targets.map(() => null);
  }
  for (let index = 0; index < targets.length; index++) {
    if (tried.has(index)) continue;
    const target = targets[index]!;
    const use = targetUse(states[index] ?? null, now());
    if (use === 'use') return { kind: 'target', index, target, probe: false };
    if (use === 'probe') {
      const claim = await cooldowns.claimProbe(target, options.probeMs(target), now()).catch(() => 'claimed' as const);
      if (claim !== 'taken') return { kind: 'target', index, target, probe: claim === 'claimed' };
    }
  }
  return { kind: 'none', waitMs: soonestBack(await cooldowns.read(targets).catch(() => states), now()) };
}

/**
 * How long until a target comes back, for the step's next attempt (which tries them all again):
 * the end of the soonest cooldown, read after this step's own failures were recorded (0 once a
 * cooldown ended and only a probe holds it, or for a target that failed without one).
 */
function soonestBack(states: readonly (TargetState | null)[], now: number): number {
  let soonest = Infinity;
  for (const state of states) soonest = Math.min(soonest, Math.max(0, (state?.coolingUntil ?? now) - now));
  return Number.isFinite(soonest) ? soonest : 0;
}
