import { followBatch, type BatchProgressFrame, type BatchProgressSource } from '../../../src/batches/batch-progress';
import type { Batch } from '../../../src/store/batches-repository';

const batchWith = (succeeded: number, status: Batch['status'] = 'running'): Batch => ({
  id: 'b1',
  userId: 'u1',
  status,
  concurrency: 1,
  priority: 5,
  metadata: null,
  skipped: [],
  counts: { total: 10, queued: 10 - succeeded, running: 0, waiting: 0, succeeded, failed: 0, cancelled: 0 },
  usage: { promptTokens: 0, completionTokens: 0, totalTokens: 0, costUsd: 0 },
  createdAt: '',
  startedAt: null,
  finishedAt: null,
});

describe('following a batch', () => {
  it('sends its progress at once, folds a burst of changes into one read per interval, and ends with batch-finish', async () => {
    let succeeded = 0;
    let reads = 0;
    let changed = () => {};
    const source: BatchProgressSource = {
      get: async () => {
        reads++;
        return batchWith(succeeded, succeeded === 10 ? 'completed' : 'running');
      },
      listen: async (_id, onChange) => {
        changed = onChange;
        return () => undefined;
      },
    };
    const frames: BatchProgressFrame[] = [];
    let sent: () => void = () => {};
    const following = await followBatch(source, 'b1', {
      send: (frame) => {
        frames.push(frame);
        sent();
      },
      minIntervalMs: 100,
      pollMs: 60_000,
    });
    expect(frames).toEqual([expect.objectContaining({ type: 'batch-progress', counts: expect.objectContaining({ succeeded: 0 }) })]);
    expect(reads).toBe(1);

    const next = new Promise<void>((resolve) => (sent = resolve));
    for (succeeded = 1; succeeded < 6; succeeded++) for (let i = 0; i < 20; i++) changed();
    succeeded = 5;
    await next;
    // A hundred announcements, one read: what the batch is now.
    expect(reads).toBe(2);
    expect(frames.at(-1)).toMatchObject({ counts: { succeeded: 5 } });

    const finish = new Promise<void>((resolve) => (sent = () => frames.at(-1)?.type === 'batch-finish' && resolve()));
    succeeded = 10;
    changed();
    await finish;
    expect(frames.slice(-2).map((frame) => frame.type)).toEqual(['batch-progress', 'batch-finish']);
    following.stop();
  });
});

describe('following a batch whose first read fails', () => {
  beforeEach(() => jest.useFakeTimers({ doNotFake: ['nextTick', 'queueMicrotask', 'setImmediate'] }));
  afterEach(() => jest.useRealTimers());

  it('refuses, and leaves no timer and no listener behind', async () => {
    let listening = false;
    const source: BatchProgressSource = {
      get: async () => {
        throw new Error('the database is away');
      },
      listen: async () => {
        listening = true;
        return () => (listening = false);
      },
    };
    await expect(followBatch(source, 'b1', { send: () => undefined, pollMs: 1_000 })).rejects.toThrow('the database is away');
    expect(listening).toBe(false);
    expect(jest.getTimerCount()).toBe(0);
  });
});
