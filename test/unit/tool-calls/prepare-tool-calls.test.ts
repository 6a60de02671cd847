import { prepareToolCalls } from '../../../src/tool-calls/prepare-tool-calls';

const registry = {
  get: (name: string) => ({ name, kind: 'http' as const }) as never,
  checkArguments: (_name: string, text: string) => ({ ok: true as const, args: JSON.parse(text) }),
};

const call = (name: string, args: unknown) => ({ id: `call_${name}`, type: 'function' as const, function: { name, arguments: JSON.stringify(args) } });

describe('prepareToolCalls and approvals', () => {
  it('stores a valid call of a gated tool awaiting approval, with its approval id and expiry; others pending', () => {
    const prepared = prepareToolCalls({
      calls: [call('transfer', { to: 'a' }), call('lookup', {}), call('nope', {})],
      offered: new Set(['transfer', 'lookup']),
      registry,
      maxCalls: 10,
      turnId: 'turn_1',
      conversationId: 'conv_1',
      step: 1,
      approval: { required: (name) => name === 'transfer' || name === 'nope', expiresAt: () => '2030-01-01T00:00:00.000Z', newId: () => 'appr_1' },
    });
    expect(prepared.map((each) => each.status)).toEqual(['awaiting_approval', 'pending', 'failed']);
    expect(prepared[0]).toMatchObject({ args: { to: 'a' }, approval: { approvalId: 'appr_1', expiresAt: '2030-01-01T00:00:00.000Z' } });
  });
});
