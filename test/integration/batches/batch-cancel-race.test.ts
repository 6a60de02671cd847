import { followBatchEvents } from '../../support/batch-events';
import { apiClient } from '../../support/http';
import { startTestStack, type TestStack } from '../../support/stack';
import { scripted } from '../../support/tool-turns';

/**
 * Cancels that race items completing: a turn's end is committed before the worker that ran it
 * records the item's end. The race is made certain by holding the workers' step from the one
 * to the other until the cancels have been answered.
 */
describe('cancelling a batch while its items complete', () => {
  let stack: TestStack;
  let api: ReturnType<typeof apiClient>;
  let apiKey: string;

  beforeAll(async () => {
    stack = await startTestStack({ workers: 1, env: { BATCH_TURNS_PER_WORKER: '12' } });
    ({ apiKey } = await stack.createUser('canceller'));
    api = apiClient(stack.url, apiKey);
  });
  afterAll(() => stack.close());

  it('keeps the result of every item whose turn completed, and its counts add up to the total', async () => {
    // The worker finds a batch item by its conversation when the item's turn has ended: held
    // there, the turn is completed and its item still running, as the cancels find it.
    const batches = stack.resources.batches;
    const itemOfConversation = batches.itemOfConversation.bind(batches);
    const held: string[] = [];
    let enoughHeld!: () => void;
    const heldEnough = new Promise<void>((resolve) => (enoughHeld = resolve));
    let release!: () => void;
    const released = new Promise<void>((resolve) => (release = resolve));
    batches.itemOfConversation = async (conversationId) => {
      held.push(conversationId);
      if (held.length >= 6) enoughHeld();
      await released;
      return itemOfConversation(conversationId);
    };

    try {
      // Every third item has two messages: cancelled after its first turn, it keeps that turn's text.
      const items = Array.from({ length: 40 }, (_, i) =>
        i % 3 === 0
          ? { customId: `m${i}`, messages: [scripted({ text: `first ${i}` }), scripted({ text: `second ${i}` })] }
          : { customId: `m${i}`, messages: [scripted({ text: `item ${i}` })] },
      );
      const created = await api.post('/v1/batches', { items, concurrency: 12 });
      expect(created.status).toBe(202);
      const batchId = created.body.id as string;
      const progress = await followBatchEvents(stack.url, apiKey, batchId);
      await heldEnough;

      const cancels = await Promise.all([1, 2, 3].map(() => api.post(`/v1/batches/${batchId}/cancel`)));
      for (const cancel of cancels) expect(cancel.status).toBe(200);
      release();
      const finish = await progress.finished();
      progress.close();

      expect(finish.status).toBe('cancelled');
      const { counts } = finish;
      expect(counts).toMatchObject({ total: 40, queued: 0, running: 0 });
      expect(counts.succeeded + counts.failed + counts.cancelled).toBe(40);
      const shown = (await api.get(`/v1/batches/${batchId}`)).body;
      expect(shown.counts).toEqual(counts);

      const lines = (await (await fetch(`${stack.url}/v1/batches/${batchId}/results`, { headers: { authorization: `Bearer ${apiKey}` } })).text())
        .trim()
        .split('\n')
        .map((line) => JSON.parse(line));
      expect(lines.map((line) => line.index)).toEqual(items.map((_, i) => i));
      const heldLines = lines.filter((line) => held.includes(line.conversationId));
      expect(heldLines.length).toBeGreaterThanOrEqual(6);
      for (const line of lines) {
        const turns = line.conversationId ? await stack.resources.turns.listForConversation(line.conversationId) : [];
        const completed = turns.filter((turn) => turn.status === 'completed');
        if (completed.length === 0) {
          expect(line).toMatchObject({ status: 'cancelled', error: { code: 'cancelled' } });
          continue;
        }
        const twoMessages = line.index % 3 === 0;
        if (!twoMessages) expect(line).toMatchObject({ status: 'succeeded', text: `item ${line.index}` });
        else if (completed.length === 2) expect(line).toMatchObject({ status: 'succeeded', text: `second ${line.index}` });
        else expect(line).toMatchObject({ status: 'cancelled', text: `first ${line.index}`, error: { code: 'cancelled' } });
        expect(line.usage.totalTokens).toBeGreaterThan(0);
      }
    } finally {
      release();
      batches.itemOfConversation = itemOfConversation;
    }
  });
});
