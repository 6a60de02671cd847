import { followBatchEvents } from '../../support/batch-events';
import { apiClient } from '../../support/http';
import { startTestStack, type TestStack } from '../../support/stack';
import { scripted } from '../../support/tool-turns';

/** Tool approvals in batches (docs/API.md "Tool approvals"): an item waits for its owner; the others run on. */
describe('a batch item waiting for approval', () => {
  let stack: TestStack;
  let api: ReturnType<typeof apiClient>;
  let apiKey: string;

  beforeAll(async () => {
    stack = await startTestStack({ workers: 1, env: { APPROVAL_REQUIRED_TOOLS: 'random_number' } });
    ({ apiKey } = await stack.createUser('batch-approver'));
    api = apiClient(stack.url, apiKey);
  });
  afterAll(() => stack.close());

  it('counts in counts.waiting while the other items run to their end; the owner approves it with the same route and the item ends', async () => {
    const gated = scripted({ steps: [{ toolCalls: [{ name: 'random_number', arguments: { min: 1, max: 6 } }] }, { text: 'Rolled.' }] });
    const items = [{ customId: 'gated', messages: [gated] }, ...[1, 2, 3].map((n) => ({ customId: `plain-${n}`, messages: [scripted({ text: `plain ${n}` })] }))];
    const created = await api.post('/v1/batches', { items, concurrency: 3 });
    expect(created.status).toBe(202);
    const batchId = created.body.batchId as string;
    const events = await followBatchEvents(stack.url, apiKey, batchId);
    try {
      // The gated item holds one of the 3 slots, parked; the other three items pass through the other two.
      const parked = await events.waitFor((frame) => frame.type === 'batch-progress' && frame.counts.waiting === 1 && frame.counts.succeeded === 3);
      expect(parked.counts).toMatchObject({ total: 4, queued: 0, running: 1, waiting: 1, succeeded: 3, failed: 0 });
      expect((await api.get(`/v1/batches/${batchId}`)).body.counts).toMatchObject({ running: 1, waiting: 1 });

      const pending = (await api.get('/v1/approvals?status=pending')).body.data;
      expect(pending).toEqual([expect.objectContaining({ toolName: 'random_number' })]);
      const [approval] = pending;
      const conversation = (await api.get(`/v1/conversations/${approval.conversationId}`)).body;
      expect(conversation.externalId).toMatch(new RegExp(`^batch:${batchId}:0:`));
      const decided = await api.post(`/v1/turns/${approval.turnId}/approvals`, { toolCallId: approval.toolCallId, approved: true });
      expect(decided.status).toBe(200);

      const finish = await events.finished();
      expect(finish).toMatchObject({ status: 'completed', counts: { total: 4, running: 0, waiting: 0, succeeded: 4 } });
    } finally {
      events.close();
    }
    const results = await fetch(`${stack.url}/v1/batches/${batchId}/results`, { headers: { authorization: `Bearer ${apiKey}` } }).then((response) => response.text());
    const first = JSON.parse(results.trim().split('\n')[0]!);
    expect(first).toMatchObject({ customId: 'gated', status: 'succeeded', text: 'Rolled.', toolCalls: [expect.objectContaining({ toolName: 'random_number', attempts: 1 })] });
    expect(first.toolCalls[0].error).toBeUndefined();
  }, 60_000);

  it('gates by defaults.requireApproval a tool that needs no approval of its own: the item parks until the owner approves, then runs it', async () => {
    const computing = scripted({ steps: [{ toolCalls: [{ name: 'calculator', arguments: { expression: '6*7' } }] }, { text: 'Computed.' }] });
    const created = await api.post('/v1/batches', { items: [{ customId: 'calc', messages: [computing] }], defaults: { requireApproval: ['calculator'] } });
    expect(created.status).toBe(202);
    const batchId = created.body.batchId as string;
    const events = await followBatchEvents(stack.url, apiKey, batchId);
    try {
      const parked = await events.waitFor((frame) => frame.type === 'batch-progress' && frame.counts.waiting === 1);
      expect(parked.counts).toMatchObject({ total: 1, running: 1, waiting: 1, succeeded: 0 });
      const pending = (await api.get('/v1/approvals?status=pending')).body.data;
      expect(pending).toEqual([expect.objectContaining({ toolName: 'calculator', args: { expression: '6*7' } })]);
      const [approval] = pending;
      expect((await api.post(`/v1/turns/${approval.turnId}/approvals`, { toolCallId: approval.toolCallId, approved: true })).status).toBe(200);
      expect(await events.finished()).toMatchObject({ status: 'completed', counts: { total: 1, running: 0, waiting: 0, succeeded: 1 } });
    } finally {
      events.close();
    }
    const results = await fetch(`${stack.url}/v1/batches/${batchId}/results`, { headers: { authorization: `Bearer ${apiKey}` } }).then((response) => response.text());
    expect(JSON.parse(results.trim())).toMatchObject({
      customId: 'calc',
      status: 'succeeded',
      text: 'Computed.',
      toolCalls: [{ toolName: 'calculator', args: { expression: '6*7' }, result: { expression: '6*7', result: 42 }, attempts: 1 }],
    });
  }, 60_000);
});
