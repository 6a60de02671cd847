import type { RedisClient } from '../redis/redis-connection';
import { targetKey, type Target } from './model-catalogue';
import type { TargetState } from './target-state';

/**
 * KEYS[1]: the deployment's target states (a hash, one field per target).
 * ARGV: target, now (epoch ms), Retry-After in ms (-1: none), base ms, max ms.
 * A failure while the target already cools down came from a request sent before it did: it
 * only lengthens the cooldown to a longer Retry-After. Otherwise the failures in a row grow by
 * one and the cooldown starts: Retry-After, else base × 2^(failures − 1) up to max. Any probe
 * is over. Returns the new state as JSON.
 */
const TARGET_FAILED = `
local raw = redis.call('HGET', KEYS[1], ARGV[1])
local now = tonumber(ARGV[2])
local retryAfter = tonumber(ARGV[3])
local state = raw and cjson.decode(raw) or { coolingUntil = 0, failures = 0 }
if state.coolingUntil > now then
  if retryAfter >= 0 and now + retryAfter > state.coolingUntil then state.coolingUntil = now + retryAfter end
else
  state.failures = state.failures + 1
  local cooldown = retryAfter
  if cooldown < 0 then cooldown = math.min(tonumber(ARGV[5]), tonumber(ARGV[4]) * 2 ^ (state.failures - 1)) end
  state.coolingUntil = now + cooldown
end
state.probeUntil = nil
local encoded = cjson.encode(state)
redis.call('HSET', KEYS[1], ARGV[1], encoded)
redis.call('PEXPIRE', KEYS[1], 86400000)
return encoded
`;

/**
 * KEYS[1]: the target states. ARGV: target, now (epoch ms), probe ms.
 * Claims the one probe of a target whose cooldown ended, for probe ms. Returns 1 (claimed), 0
 * (healthy now: no state, nothing to probe), -1 (still cooling down, or another probe runs).
 */
const CLAIM_PROBE = `
local raw = redis.call('HGET', KEYS[1], ARGV[1])
if not raw then return 0 end
local now = tonumber(ARGV[2])
local state = cjson.decode(raw)
if state.coolingUntil > now then return -1 end
if state.probeUntil and state.probeUntil > now then return -1 end
state.probeUntil = now + tonumber(ARGV[3])
redis.call('HSET', KEYS[1], ARGV[1], cjson.encode(state))
return 1
`;

export type ProbeClaim = 'claimed' | 'healthy' | 'taken';

/**
 * Which targets cool down, for every process of the deployment alike: one Redis hash, read
 * once per step (the states of its model's targets), written only when a target fails or
 * recovers.
 */
export class TargetCooldowns {
  private readonly key: string;

  constructor(
    private readonly redis: RedisClient,
    prefix: string,
    private readonly policy: { baseMs: number; maxMs: number },
  ) {
    this.key = `${prefix}:model-targets`;
  }

  /** The states of `targets`, in their order (null: healthy). */
  async read(targets: readonly Pick<Target, 'provider' | 'model'>[]): Promise<(TargetState | null)[]> {
    if (targets.length === 0) return [];
    const raw = await this.redis.hmget(this.key, ...targets.map(targetKey));
    return raw.map(parseState);
  }

  /** Every target that has a state, by its key (`provider/model`). */
  async all(): Promise<Map<string, TargetState>> {
    const raw = await this.redis.hgetall(this.key);
    const states = new Map<string, TargetState>();
    for (const [key, value] of Object.entries(raw)) {
      const state = parseState(value);
      if (state) states.set(key, state);
    }
    return states;
  }

  /** The target failed: it cools down (see TARGET_FAILED); resolves with its new state. */
  async failed(target: Pick<Target, 'provider' | 'model'>, retryAfterMs: number | undefined, now = Date.now()): Promise<TargetState> {
    const encoded = (await this.redis.eval(TARGET_FAILED, 1, this.key, targetKey(target), now, retryAfterMs ?? -1, this.policy.baseMs, this.policy.maxMs)) as string;
    return parseState(encoded)!;
  }

  /** Claims the one probe of a target whose cooldown ended, for `probeMs` (its timeout: a probe that dies lets another go then). */
  async claimProbe(target: Pick<Target, 'provider' | 'model'>, probeMs: number, now = Date.now()): Promise<ProbeClaim> {
    const claimed = Number(await this.redis.eval(CLAIM_PROBE, 1, this.key, targetKey(target), now, probeMs));
    return claimed === 1 ? 'claimed' : claimed === 0 ? 'healthy' : 'taken';
  }

  /** The target answered: it is healthy again, its failures in a row forgotten. */
  async recovered(target: Pick<Target, 'provider' | 'model'>): Promise<void> {
    await this.redis.hdel(this.key, targetKey(target));
  }
}

function parseState(raw: string | null | undefined): TargetState | null {
  if (!raw) return null;
  const state = JSON.parse(raw) as { coolingUntil: number; failures: number; probeUntil?: number };
  return { coolingUntil: state.coolingUntil, failures: state.failures, ...(state.probeUntil ? { probeUntil: state.probeUntil } : {}) };
}
