import type { Db } from '../../../src/store/db';
import { BatchesRepository } from '../../../src/store/batches-repository';
import { UsersRepository } from '../../../src/store/users-repository';
import { createTestDatabase } from '../../support/database';

const usage = (totalTokens: number) => ({ promptTokens: totalTokens - 1, completionTokens: 1, totalTokens });

describe.each(['postgres', 'pglite'] as const)('batch figures on %s', (kind) => {
  let db: Db;
  let drop: () => Promise<void>;
  let batches: BatchesRepository;
  let userId: string;

  beforeAll(async () => {
    ({ db, drop } = await createTestDatabase(kind));
    batches = new BatchesRepository(db);
    userId = (await new UsersRepository(db).createUserWithKey('batcher')).id;
  });
  afterAll(() => drop());

  it('keeps counts and usage on the batch as its items start, end, are cancelled and run again', async () => {
    const items = Array.from({ length: 5 }, (_, i) => ({ line: i + 1, spec: { messages: [`item ${i}`] } }));
    const created = await batches.create({ userId, options: { concurrency: 3, priority: 5, skipInvalid: false }, items, skipped: [], requestHash: 'h' });
    if (created.kind !== 'created') throw new Error(created.kind);
    const id = created.batch.id;
    const figures = async () => {
      const batch = (await batches.get(userId, id))!;
      return { ...batch.counts, tokens: batch.usage.totalTokens };
    };
    expect(await figures()).toEqual({ total: 5, queued: 5, running: 0, succeeded: 0, failed: 0, cancelled: 0, waiting: 0, tokens: 0 });

    const claimed = (await batches.claimQueued(id, 100))!.items;
    expect(await figures()).toMatchObject({ queued: 2, running: 3 });
    await batches.finishItem(claimed[0]!, 'succeeded', { text: 'a', toolCalls: [], usage: usage(10) });
    await batches.finishItem(claimed[1]!, 'failed', { text: '', toolCalls: [], usage: usage(4), error: { code: 'provider_error', message: 'no' } });
    // Ended already: changes nothing.
    expect(await batches.finishItem(claimed[0]!, 'failed', { text: '', toolCalls: [], usage: usage(99) })).toBe(false);
    expect(await figures()).toMatchObject({ queued: 2, running: 1, succeeded: 1, failed: 1, tokens: 14 });

    await batches.cancel(id);
    expect(await figures()).toMatchObject({ queued: 0, running: 1, succeeded: 1, failed: 1, cancelled: 2, tokens: 14 });
    await batches.finishItem(claimed[2]!, 'cancelled', { text: '', toolCalls: [], usage: usage(3) });
    expect(await batches.endIfDone(id)).toBe(true);
    // A retry takes the failed item's result (and its usage) back.
    expect(await batches.requeueFailed(id)).toBe(1);
    expect(await figures()).toEqual({ total: 5, queued: 1, running: 0, succeeded: 1, failed: 0, cancelled: 3, waiting: 0, tokens: 13 });
  });
});
