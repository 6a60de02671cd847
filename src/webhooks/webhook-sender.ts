import type { Dispatcher } from 'undici';
import { undici } from '../providers/undici-module';
import type { ResolvedTarget } from './webhook-target';

/** What one attempt came to: the receiver's answer, or why there was none. */
export type AttemptOutcome = { kind: 'answered'; statusCode: number; ok: boolean; bodyExcerpt: string } | { kind: 'timeout' } | { kind: 'network_error'; message: string };

/** How much of the receiver's answer is read: enough for an error message, never a whole body. */
const MAX_BODY_BYTES = 4096;
/** How much of it is kept in the delivery log. */
const EXCERPT_CHARS = 200;

/**
 * POSTs one delivery through `dispatcher`, which connects to `target.addresses` only whatever a
 * new DNS answer would say (webhook-connections.ts), while the Host header and TLS name stay the
 * URL's host, so certificates are still verified against it. No redirects are followed: a
 * redirect could point inside. `timeoutMs` bounds the whole attempt, from connecting (or taking
 * a kept-alive connection) to the last byte read.
 */
export async function sendWebhook(
  target: ResolvedTarget,
  dispatcher: Dispatcher,
  input: { headers: Record<string, string>; body: string; timeoutMs: number },
): Promise<AttemptOutcome> {
  if (target.addresses.length === 0) return { kind: 'network_error', message: 'no address to connect to' };
  const { request } = undici();
  const signal = AbortSignal.timeout(input.timeoutMs);
  try {
    const answer = await request(target.url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'user-agent': 'Switchyard-Webhooks/1', ...input.headers },
      body: input.body,
      dispatcher,
      signal,
    });
    const bodyExcerpt = await readExcerpt(answer.body);
    return { kind: 'answered', statusCode: answer.statusCode, ok: answer.statusCode >= 200 && answer.statusCode < 300, bodyExcerpt };
  } catch (error) {
    if (signal.aborted) return { kind: 'timeout' };
    return { kind: 'network_error', message: describeNetworkError(error) };
  }
}

/**
 * The start of the body, up to MAX_BODY_BYTES read. A body read to its end leaves the connection
 * for the next attempt; leaving the loop early destroys the body, and the rest is dropped with
 * the connection.
 */
async function readExcerpt(body: AsyncIterable<Buffer>): Promise<string> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of body) {
    chunks.push(chunk);
    size += chunk.length;
    if (size >= MAX_BODY_BYTES) break;
  }
  return Buffer.concat(chunks).subarray(0, MAX_BODY_BYTES).toString('utf8').slice(0, EXCERPT_CHARS);
}

function describeNetworkError(error: unknown): string {
  const cause = (error as { cause?: { code?: string; message?: string } }).cause;
  const code = (error as { code?: string }).code ?? cause?.code;
  const message = error instanceof Error ? error.message : String(error);
  return code ? `${code}: ${message}` : message;
}
