import type { IncomingMessage } from 'node:http';
import proxyAddr from 'proxy-addr';
import { RateLimiterMemory } from 'rate-limiter-flexible';

/**
 * Missing or wrong credentials, counted per client address in this process's memory: past
 * `perMinute` the address is refused before any lookup, so a flood of bad keys costs neither
 * PostgreSQL nor Redis. An address over the limit is refused for what is left of its minute,
 * whatever it sends.
 */
export class FailedAuthGuard {
  private readonly failures: RateLimiterMemory;

  constructor(private readonly perMinute: number) {
    this.failures = new RateLimiterMemory({ points: perMinute, duration: 60 });
  }

  /** Seconds the address must wait; 0 when it may try now. */
  async waitSeconds(address: string): Promise<number> {
    const state = await this.failures.get(address);
    if (!state || state.consumedPoints < this.perMinute) return 0;
    return Math.max(1, Math.ceil(state.msBeforeNext / 1000));
  }

  async failed(address: string): Promise<void> {
    await this.failures.penalty(address, 1);
  }
}

/** The client's address as TRUST_PROXY says to read it, for HTTP requests and websocket handshakes alike. */
export function clientAddressOf(trustProxy: boolean | number | string[]): (req: IncomingMessage) => string {
  const trust = typeof trustProxy === 'boolean' ? () => trustProxy : proxyAddr.compile(typeof trustProxy === 'number' ? [] : trustProxy);
  const hops = typeof trustProxy === 'number' ? trustProxy : undefined;
  return (req) => {
    if (hops === undefined) return proxyAddr(req, trust);
    // A hop count: believe that many entries of X-Forwarded-For from the right.
    const chain = proxyAddr.all(req);
    return chain[Math.min(hops, chain.length - 1)] ?? 'unknown';
  };
}
