import type { WebhookEndpoint } from '../store/webhooks-repository';
import type { SecretBox } from './secret-box';

/**
 * The secrets that sign an attempt made at `nowMs`: the endpoint's current one, and the one a
 * rotation replaced until its `previousSecretUntil` (24 h after the rotation), so that a
 * receiver still verifying with the old secret keeps accepting deliveries while it switches.
 */
export function liveSecrets(secretBox: SecretBox, endpoint: Pick<WebhookEndpoint, 'secret' | 'previousSecret' | 'previousSecretUntil'>, nowMs: number): string[] {
  const secrets = [secretBox.open(endpoint.secret)];
  if (endpoint.previousSecret && endpoint.previousSecretUntil && endpoint.previousSecretUntil.getTime() > nowMs) secrets.push(secretBox.open(endpoint.previousSecret));
  return secrets;
}
