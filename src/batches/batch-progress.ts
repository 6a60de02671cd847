import type { ServerFrame } from '../events/ws-frames';
import type { Batch, BatchStatus } from '../store/batches-repository';

/** The channel a batch's changes are announced on (a hint: followers read the batch). */
export const batchChannel = (prefix: string, batchId: string) => `${prefix}:batch:{${batchId}}`;

/** What a batch's followers are sent: the websocket's frames (docs/API.md), also the SSE route's events. */
export type BatchProgressFrame = Extract<ServerFrame, { type: 'batch-progress' | 'batch-finish' }>;

export interface BatchProgressSource {
  get(batchId: string): Promise<Batch | null>;
  /** Calls `changed` on every announcement for the batch; resolves once listening. */
  listen(batchId: string, changed: () => void): Promise<() => void>;
}

const ENDED: ReadonlySet<BatchStatus> = new Set(['completed', 'cancelled']);

/**
 * Follows a batch for one reader (docs/API.md, "Batches"): its progress at once, then whenever
 * it changes, at most once per `minIntervalMs`, then one `batch-finish`, after which `onEnd`
 * runs. Announcements are hints; a slow poll covers any that pub/sub lost.
 */
export async function followBatch(
  source: BatchProgressSource,
  batchId: string,
  options: { send(frame: BatchProgressFrame): void; onEnd?(): void; minIntervalMs?: number; pollMs?: number },
): Promise<{ stop(): void }> {
  const minIntervalMs = options.minIntervalMs ?? 250;
  let lastSent = '';
  let lastSentAt = 0;
  let timer: ReturnType<typeof setTimeout> | undefined;
  let reading = false;
  let again = false;
  let stopped = false;

  const stop = () => {
    if (stopped) return;
    stopped = true;
    clearTimeout(timer);
    clearInterval(poll);
    unlisten();
  };
  const read = async () => {
    if (stopped) return;
    if (reading) return void (again = true);
    reading = true;
    try {
      const batch = await source.get(batchId);
      if (!batch || stopped) return;
      const progress: BatchProgressFrame = { type: 'batch-progress', batchId, counts: batch.counts, usage: batch.usage };
      const json = JSON.stringify(progress);
      if (json !== lastSent) {
        lastSent = json;
        lastSentAt = Date.now();
        options.send(progress);
      }
      if (ENDED.has(batch.status)) {
        options.send({ type: 'batch-finish', batchId, status: batch.status, counts: batch.counts });
        stop();
        options.onEnd?.();
      }
    } finally {
      reading = false;
      if (again) {
        again = false;
        schedule();
      }
    }
  };
  const schedule = () => {
    if (timer !== undefined || stopped) return;
    timer = setTimeout(
      () => {
        timer = undefined;
        void read().catch(() => undefined);
      },
      Math.max(0, lastSentAt + minIntervalMs - Date.now()),
    );
  };
  const unlisten = await source.listen(batchId, schedule);
  const poll = setInterval(schedule, options.pollMs ?? 2_000);
  try {
    await read();
  } catch (error) {
    // The caller gets no handle to stop with: what was started for it stops here.
    stop();
    throw error;
  }
  return { stop };
}
