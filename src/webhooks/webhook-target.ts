import { lookup } from 'node:dns/promises';
import ipaddr from 'ipaddr.js';

/** A URL's host resolved and checked: where an attempt connects, whatever the DNS says later. */
export interface ResolvedTarget {
  url: URL;
  /** Every address the host had, all checked, in the resolver's order. */
  addresses: { address: string; family: 4 | 6 }[];
}

export type TargetCheck = { ok: true; target: ResolvedTarget } | { ok: false; reason: string };

export interface TargetPolicy {
  /** WEBHOOK_ALLOW_PRIVATE_NETWORKS: loopback, private and link-local addresses allowed (development, tests). */
  allowPrivateNetworks: boolean;
  /** Resolves a host name to its addresses (injectable for tests). */
  resolve?(hostname: string): Promise<{ address: string; family: number }[]>;
}

const resolveAll = (hostname: string) => lookup(hostname, { all: true, verbatim: true });

/** Only http(s), with no credentials in it: the checks that need no DNS. */
export function checkWebhookUrl(text: string): { ok: true; url: URL } | { ok: false; reason: string } {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    return { ok: false, reason: 'not a URL' };
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') return { ok: false, reason: 'only http:// and https:// URLs take webhooks' };
  if (url.username || url.password) return { ok: false, reason: 'a webhook URL carries no credentials' };
  return { ok: true, url };
}

/**
 * Resolves the URL's host once and checks every address it has: one that is loopback, private,
 * link-local (or any range other than public unicast) refuses the whole host, so a name with a
 * public and an inside address cannot be used to reach the inside. The attempt then connects to
 * the address checked here (webhook-sender.ts), not to a second resolution. A refusal names
 * neither the address nor the resolver's error: it reaches whoever registers a URL, and would
 * otherwise let any API key map the names of the network the server is in.
 */
export async function resolveWebhookTarget(text: string, policy: TargetPolicy): Promise<TargetCheck> {
  const checked = checkWebhookUrl(text);
  if (!checked.ok) return checked;
  const { url } = checked;
  const hostname = url.hostname.replace(/^\[(.*)\]$/, '$1');
  let addresses: { address: string; family: number }[];
  try {
    addresses = ipaddr.isValid(hostname) ? [{ address: hostname, family: ipaddr.parse(hostname).kind() === 'ipv6' ? 6 : 4 }] : await (policy.resolve ?? resolveAll)(hostname);
  } catch {
    return { ok: false, reason: `the host ${hostname} does not resolve` };
  }
  if (addresses.length === 0) return { ok: false, reason: `the host ${hostname} has no address` };
  if (!policy.allowPrivateNetworks) {
    if (addresses.some((each) => !isPublicAddress(each.address))) return { ok: false, reason: `the host ${hostname} resolves to a loopback, private or link-local address` };
  }
  return { ok: true, target: { url, addresses: addresses.map((each) => ({ address: each.address, family: each.family === 6 ? 6 : 4 })) } };
}

/** Public unicast only; an IPv4-mapped IPv6 address is judged as the IPv4 address it carries. */
export function isPublicAddress(address: string): boolean {
  let parsed = ipaddr.parse(address);
  if (parsed.kind() === 'ipv6' && (parsed as ipaddr.IPv6).isIPv4MappedAddress()) parsed = (parsed as ipaddr.IPv6).toIPv4Address();
  return parsed.range() === 'unicast';
}
