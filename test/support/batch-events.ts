/** A batch's SSE progress (`GET /v1/batches/:id/events`) as a test reads it: every frame, and waits by predicate. */
export interface BatchEvents {
  frames: { type: string; at: number; [field: string]: any }[];
  /** Resolves with the first frame (seen or to come) that matches; rejects after `timeoutMs`. */
  waitFor(predicate: (frame: { type: string; [field: string]: any }) => boolean, timeoutMs?: number): Promise<any>;
  /** The batch-finish frame. */
  finished(timeoutMs?: number): Promise<any>;
  close(): void;
}

export async function followBatchEvents(baseUrl: string, apiKey: string, batchId: string): Promise<BatchEvents> {
  const controller = new AbortController();
  const response = await fetch(`${baseUrl}/v1/batches/${batchId}/events`, { headers: { authorization: `Bearer ${apiKey}` }, signal: controller.signal });
  if (response.status !== 200) throw new Error(`batch events answered ${response.status}: ${await response.text()}`);
  const frames: BatchEvents['frames'] = [];
  const waiters = new Set<{ predicate: (frame: any) => boolean; resolve(frame: any): void }>();
  let ended = false;
  void (async () => {
    const decoder = new TextDecoder();
    let buffer = '';
    try {
      for await (const chunk of response.body!) {
        buffer += decoder.decode(chunk as Uint8Array, { stream: true });
        for (let end = buffer.indexOf('\n\n'); end >= 0; end = buffer.indexOf('\n\n')) {
          const block = buffer.slice(0, end);
          buffer = buffer.slice(end + 2);
          const type = /^event: (.+)$/m.exec(block)?.[1];
          const data = /^data: (.+)$/m.exec(block)?.[1];
          if (!type || !data) continue;
          const frame = { type, at: Date.now(), ...JSON.parse(data) };
          frames.push(frame);
          for (const waiter of [...waiters]) {
            if (!waiter.predicate(frame)) continue;
            waiters.delete(waiter);
            waiter.resolve(frame);
          }
        }
      }
    } catch {
      // closed by the test
    } finally {
      ended = true;
    }
  })();
  const waitFor: BatchEvents['waitFor'] = (predicate, timeoutMs = 60_000) => {
    const seen = frames.find(predicate);
    if (seen) return Promise.resolve(seen);
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        waiters.delete(waiter);
        reject(new Error(`no such batch frame${ended ? ' (the stream ended)' : ''}; last: ${JSON.stringify(frames.slice(-3))}`));
      }, timeoutMs);
      const waiter = {
        predicate,
        resolve: (frame: any) => {
          clearTimeout(timer);
          resolve(frame);
        },
      };
      waiters.add(waiter);
    });
  };
  return { frames, waitFor, finished: (timeoutMs) => waitFor((frame) => frame.type === 'batch-finish', timeoutMs), close: () => controller.abort() };
}
