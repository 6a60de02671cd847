import { liveSecrets } from '../../../src/webhooks/live-secrets';
import { SecretBox } from '../../../src/webhooks/secret-box';
import { PREVIOUS_SECRET_TTL_MS } from '../../../src/webhooks/webhook-endpoints';

describe('liveSecrets', () => {
  const box = new SecretBox('live-secrets-test-key-of-32-characters');
  const rotatedAt = Date.parse('2025-03-01T12:00:00Z');
  // What a rotation at `rotatedAt` leaves (webhook-endpoints.ts, rotateEndpointSecret).
  const endpoint = { secret: box.seal('whsec_new'), previousSecret: box.seal('whsec_old'), previousSecretUntil: new Date(rotatedAt + PREVIOUS_SECRET_TTL_MS) };

  it('signs with the replaced secret too for the 24 h after a rotation, then with the new one alone', () => {
    expect(PREVIOUS_SECRET_TTL_MS).toBe(24 * 3600_000);
    expect(liveSecrets(box, endpoint, rotatedAt)).toEqual(['whsec_new', 'whsec_old']);
    expect(liveSecrets(box, endpoint, rotatedAt + 24 * 3600_000 - 1)).toEqual(['whsec_new', 'whsec_old']);
    expect(liveSecrets(box, endpoint, rotatedAt + 24 * 3600_000)).toEqual(['whsec_new']);
    expect(liveSecrets(box, endpoint, rotatedAt + 3 * 24 * 3600_000)).toEqual(['whsec_new']);
  });

  it('signs with the one secret of an endpoint never rotated', () => {
    expect(liveSecrets(box, { secret: box.seal('whsec_only'), previousSecret: null, previousSecretUntil: null }, rotatedAt)).toEqual(['whsec_only']);
  });
});
