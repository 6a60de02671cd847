import { isPublicAddress, resolveWebhookTarget } from '../../../src/webhooks/webhook-target';

const resolvingTo = (...addresses: string[]) => async () => addresses.map((address) => ({ address, family: address.includes(':') ? 6 : 4 }));

describe('webhook targets', () => {
  it.each([
    ['93.184.215.14', true],
    ['2606:2800:21f:cb07:6820:80da:af6b:8b2c', true],
    ['127.0.0.1', false],
    ['10.1.2.3', false],
    ['172.16.0.1', false],
    ['192.168.1.1', false],
    ['169.254.169.254', false],
    ['100.64.0.1', false],
    ['0.0.0.0', false],
    ['::1', false],
    ['fe80::1', false],
    ['fd00::1', false],
    ['::ffff:10.0.0.1', false],
    ['::ffff:93.184.215.14', true],
  ])('%s is public: %s', (address, expected) => {
    expect(isPublicAddress(address)).toBe(expected);
  });

  it('connects to the address it checked', async () => {
    const checked = await resolveWebhookTarget('https://hooks.example.com/in', { allowPrivateNetworks: false, resolve: resolvingTo('93.184.215.14') });
    expect(checked).toMatchObject({ ok: true, target: { addresses: [{ address: '93.184.215.14', family: 4 }] } });
  });

  it('refuses a host with any inside address among its public ones', async () => {
    const checked = await resolveWebhookTarget('https://hooks.example.com/in', { allowPrivateNetworks: false, resolve: resolvingTo('93.184.215.14', '10.0.0.5') });
    // Without the address: the reason reaches the user, who should learn nothing of the inside network.
    expect(checked).toEqual({ ok: false, reason: 'the host hooks.example.com resolves to a loopback, private or link-local address' });
  });

  it('allows inside addresses only when private networks are allowed', async () => {
    const checked = await resolveWebhookTarget('http://hooks.internal/in', { allowPrivateNetworks: true, resolve: resolvingTo('10.0.0.5') });
    expect(checked).toMatchObject({ ok: true, target: { addresses: [{ address: '10.0.0.5', family: 4 }] } });
  });

  it('refuses what is not http(s) whatever the policy', async () => {
    for (const url of ['file:///etc/passwd', 'gopher://example.com', 'not a url']) {
      expect((await resolveWebhookTarget(url, { allowPrivateNetworks: true })).ok).toBe(false);
    }
  });

  it('refuses a host that does not resolve', async () => {
    const failing = async () => {
      throw Object.assign(new Error('not found'), { code: 'ENOTFOUND' });
    };
    // Without the resolver's error code, which tells a name that does not exist from one the resolver could not answer for.
    expect(await resolveWebhookTarget('https://nowhere.example/in', { allowPrivateNetworks: false, resolve: failing })).toEqual({ ok: false, reason: 'the host nowhere.example does not resolve' });
  });
});
