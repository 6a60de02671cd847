import type { LookupFunction } from 'node:net';
import { LRUCache } from 'lru-cache';
import type { Agent } from 'undici';
import { undici } from '../providers/undici-module';
import type { ResolvedTarget } from './webhook-target';

/** Agents kept at once: one per receiver address in use; the least recently used is closed past this. */
const MAX_AGENTS = 1000;
/** An agent unused this long is closed with its connections. */
const IDLE_MS = 60_000;
/** Connections per agent: a worker's concurrent attempts to one receiver share these. */
const CONNECTIONS_PER_AGENT = 32;

/**
 * Keep-alive connections to webhook receivers, one undici Agent per checked target (the URL's
 * origin and the exact addresses its host was checked to have). An attempt reuses the
 * connections of earlier ones instead of opening (and, over TLS, negotiating) a new one each
 * time, which at a steady stream of events cost more CPU than the rest of the delivery. The
 * agent's lookup hands back only the checked addresses, and a host that resolves differently
 * later gets an agent of its own: a connection never goes anywhere the check did not allow.
 */
export class WebhookConnections {
  private readonly agents = new LRUCache<string, Agent>({
    max: MAX_AGENTS,
    ttl: IDLE_MS,
    ttlAutopurge: true,
    updateAgeOnGet: true,
    // close() lets requests under way finish first.
    dispose: (agent) => void agent.close().catch(() => undefined),
  });

  /** The agent that connects to `target`'s checked addresses only. */
  agentFor(target: ResolvedTarget): Agent {
    const key = `${target.url.origin} ${target.addresses.map((each) => each.address).join(',')}`;
    let agent = this.agents.get(key);
    if (!agent) {
      agent = new (undici().Agent)({ connect: { lookup: pinnedLookup(target.addresses) }, connections: CONNECTIONS_PER_AGENT });
      this.agents.set(key, agent);
    }
    return agent;
  }

  /** Closes every agent, letting requests under way finish. */
  async close(): Promise<void> {
    const agents = [...this.agents.values()];
    this.agents.clear();
    await Promise.all(agents.map((agent) => agent.close().catch(() => undefined)));
  }
}

/** A lookup answering with the checked addresses whatever the DNS says now. Node asks for every address (and tries them in turn) or for one. */
function pinnedLookup(addresses: ResolvedTarget['addresses']): LookupFunction {
  const [first] = addresses;
  return (_hostname, options, callback) => {
    if (options.all) (callback as unknown as (error: null, all: ResolvedTarget['addresses']) => void)(null, addresses);
    else callback(null, first!.address, first!.family);
  };
}
