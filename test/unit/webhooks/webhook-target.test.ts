import { isPublicAddress, resolveWebhookTarget } from '../../../src/webhooks/webhook-target';

const UNREACHABLE = (host: string) => `the host ${host} does not resolve, or resolves to an address that is not public (loopback, private, link-local)`;
const resolvingTo =
  (...addresses: string[]) =>
  async () =>
    addresses.map((address) => ({ address, family: address.includes(':') ? 6 : 4 }));

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
    // IPv4-compatible (::/96, deprecated): a stack that still honours it reaches the IPv4 address inside.
    ['::7f00:1', false],
    ['::127.0.0.1', false],
    ['::5db8:d70e', false],
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
    expect(checked).toEqual({ ok: false, reason: UNREACHABLE('hooks.example.com') });
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

  it('refuses a host that does not resolve, or has no address, in the words it refuses an inside one with', async () => {
    const failing = async () => {
      throw Object.assign(new Error('not found'), { code: 'ENOTFOUND' });
    };
    // One reason for all three: told apart, they would map which inside names exist. Nor the
    // resolver's error code, which tells a name that does not exist from one it could not answer for.
    const policy = { allowPrivateNetworks: false };
    const reasons = [
      await resolveWebhookTarget('https://hooks.example/in', { ...policy, resolve: failing }),
      await resolveWebhookTarget('https://hooks.example/in', { ...policy, resolve: resolvingTo() }),
      await resolveWebhookTarget('https://hooks.example/in', { ...policy, resolve: resolvingTo('10.0.0.5') }),
    ];
    expect(reasons).toEqual([0, 1, 2].map(() => ({ ok: false, reason: UNREACHABLE('hooks.example') })));
  });

  it('refuses an IPv4-compatible IPv6 literal, which ipaddr.js counts as unicast', async () => {
    const checked = await resolveWebhookTarget('http://[::127.0.0.1]/hook', { allowPrivateNetworks: false });
    expect(checked).toEqual({ ok: false, reason: UNREACHABLE('::7f00:1') });
  });
});
