import { Webhook } from 'standardwebhooks';
import { generateWebhookSecret, signWebhook } from '../../../src/webhooks/webhook-signature';

describe('signWebhook', () => {
  const body = JSON.stringify({ id: 'evt_1', type: 'turn.completed', createdAt: '2026-01-01T00:00:00.000Z', data: { turnId: 't' } });
  const now = Math.floor(Date.now() / 1000);

  it('is verified by the Standard Webhooks library with the secret', () => {
    const secret = generateWebhookSecret();
    expect(secret).toMatch(/^whsec_[A-Za-z0-9+/]{32}$/);
    const headers = signWebhook({ id: 'evt_1', timestamp: now, body, secrets: [secret] });
    expect(headers).toMatchObject({ 'webhook-id': 'evt_1', 'webhook-timestamp': String(now) });
    expect(new Webhook(secret).verify(body, headers)).toEqual(JSON.parse(body));
  });

  it('carries one signature per live secret, each verifying alone', () => {
    const [older, newer] = [generateWebhookSecret(), generateWebhookSecret()];
    const headers = signWebhook({ id: 'evt_1', timestamp: now, body, secrets: [newer, older] });
    expect(headers['webhook-signature']!.split(' ')).toHaveLength(2);
    expect(() => new Webhook(older).verify(body, headers)).not.toThrow();
    expect(() => new Webhook(newer).verify(body, headers)).not.toThrow();
    expect(() => new Webhook(generateWebhookSecret()).verify(body, headers)).toThrow();
  });

  it('does not verify a body changed after signing', () => {
    const secret = generateWebhookSecret();
    const headers = signWebhook({ id: 'evt_1', timestamp: now, body, secrets: [secret] });
    expect(() => new Webhook(secret).verify(body.replace('turn.completed', 'turn.failed'), headers)).toThrow();
  });
});
