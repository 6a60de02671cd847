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
 * neither the address nor the resolver's error, and says the same whether the name does not
 * resolve or resolves inside: it reaches whoever registers a URL, and told apart they would let
 * any API key map which names exist in the network the server is in.
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
    return unreachable(hostname);
  }
  if (addresses.length === 0) return unreachable(hostname);
  if (!policy.allowPrivateNetworks && addresses.some((each) => !isPublicAddress(each.address))) return unreachable(hostname);
  return { ok: true, target: { url, addresses: addresses.map((each) => ({ address: each.address, family: each.family === 6 ? 6 : 4 })) } };
}

function unreachable(hostname: string): TargetCheck {
  return { ok: false, reason: `the host ${hostname} does not resolve, or resolves to an address that is not public (loopback, private, link-local)` };
}

/**
 * IPv4-compatible IPv6 (`::a.b.c.d`, deprecated by RFC 4291): ipaddr.js has no range for it and
 * calls it unicast, but a stack that still honours it reaches the IPv4 address it carries
 * (`::7f00:1` is 127.0.0.1). `::` and `::1` are in it too, and have ranges of their own.
 */
const IPV4_COMPATIBLE = ipaddr.IPv6.parseCIDR('::/96');

/**
 * Public unicast only, by ipaddr.js's ranges; an IPv4-mapped IPv6 address is judged as the IPv4
 * address it carries, and an IPv4-compatible one is refused.
 */
export function isPublicAddress(address: string): boolean {
  const parsed = ipaddr.parse(address);
  if (parsed.kind() === 'ipv4') return parsed.range() === 'unicast';
  const ipv6 = parsed as ipaddr.IPv6;
  if (ipv6.isIPv4MappedAddress()) return ipv6.toIPv4Address().range() === 'unicast';
  return ipv6.range() === 'unicast' && !ipv6.match(IPV4_COMPATIBLE);
}
