import { createHmac, randomBytes } from 'node:crypto';

const SECRET_PREFIX = 'whsec_';

/** A new endpoint secret in the Standard Webhooks form: `whsec_` and 24 random bytes in base64. */
export function generateWebhookSecret(): string {
  return SECRET_PREFIX + randomBytes(24).toString('base64');
}

/**
 * The Standard Webhooks headers of one attempt: `webhook-signature` holds one `v1,<base64
 * HMAC-SHA256 of "<id>.<timestamp>.<body>">` per live secret, space-separated, so a receiver
 * verifying with either secret accepts it while a rotation is under way.
 */
export function signWebhook(input: { id: string; timestamp: number; body: string; secrets: string[] }): Record<string, string> {
  const signed = `${input.id}.${input.timestamp}.${input.body}`;
  const signatures = input.secrets.map((secret) => {
    const key = Buffer.from(secret.startsWith(SECRET_PREFIX) ? secret.slice(SECRET_PREFIX.length) : secret, 'base64');
    return `v1,${createHmac('sha256', key).update(signed).digest('base64')}`;
  });
  return { 'webhook-id': input.id, 'webhook-timestamp': String(input.timestamp), 'webhook-signature': signatures.join(' ') };
}
