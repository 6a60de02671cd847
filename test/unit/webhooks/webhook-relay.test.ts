import type { Queue } from 'bullmq';
import pino from 'pino';
import type { ChannelListener } from '../../../src/store/db';
import { startWebhookRelay, type WebhookRelayDeps } from '../../../src/webhooks/webhook-relay';

const INTERVAL_MS = 60_000;

/**
 * A relay over a store with nothing to relay (so its queue is never reached), counting its
 * passes; with `held`, passes keep running until `releasePasses`.
 */
function idleRelay(options: { held?: boolean } = {}) {
  let listener: ChannelListener | undefined;
  let closed = false;
  let running = 0;
  let release: (() => void) | undefined;
  let held = options.held ? new Promise<void>((resolve) => (release = resolve)) : undefined;
  const seen = { passes: 0, mostAtOnce: 0 };
  const webhooks: WebhookRelayDeps['webhooks'] = {
    async unenqueued() {
      seen.passes++;
      seen.mostAtOnce = Math.max(seen.mostAtOnce, ++running);
      await held;
      running--;
      return [];
    },
    markEnqueued: async () => undefined,
    overdue: async () => ({ runs: [], next: null }),
  };
  const relay = startWebhookRelay(
    {
      webhooks,
      webhookQueue: {} as Queue,
      logger: pino({ level: 'silent' }),
      wakeups: (given) => {
        listener = given;
        return { close: async () => void (closed = true) };
      },
    },
    { intervalMs: INTERVAL_MS },
  );
  return {
    relay,
    seen,
    listener: () => listener!,
    closed: () => closed,
    releasePasses: () => {
      held = undefined;
      release?.();
    },
  };
}

describe('the webhook relay woken by commits', () => {
  beforeEach(() => jest.useFakeTimers({ doNotFake: ['nextTick', 'queueMicrotask', 'setImmediate'] }));
  afterEach(() => jest.useRealTimers());

  it('runs a pass as soon as a wakeup comes while it is idle, not an interval later', async () => {
    const { relay, seen, listener } = idleRelay();
    await jest.advanceTimersByTimeAsync(0);
    expect(seen.passes).toBe(1);
    await jest.advanceTimersByTimeAsync(INTERVAL_MS - 1);
    expect(seen.passes).toBe(1);

    listener().notified();
    await jest.advanceTimersByTimeAsync(0);
    expect(seen.passes).toBe(2);
    await relay.stop();
  });

  it('makes one pass of a burst of wakeups', async () => {
    const { relay, seen, listener } = idleRelay();
    await jest.advanceTimersByTimeAsync(0);
    for (let i = 0; i < 5; i++) listener().notified();
    await jest.advanceTimersByTimeAsync(1000);
    expect(seen.passes).toBe(2);
    await relay.stop();
  });

  it('makes one more pass after the one running when woken during it, never two at once', async () => {
    const { relay, seen, listener, releasePasses } = idleRelay({ held: true });
    await jest.advanceTimersByTimeAsync(0);
    expect(seen.passes).toBe(1);
    // A commit the running pass may have read before: it must be looked at again.
    for (let i = 0; i < 3; i++) listener().notified();
    await jest.advanceTimersByTimeAsync(1000);
    expect(seen.passes).toBe(1);
    releasePasses();
    await jest.advanceTimersByTimeAsync(1000);
    expect(seen).toEqual({ passes: 2, mostAtOnce: 1 });
    await relay.stop();
  });

  it('catches up when it listens again, and still looks every interval without wakeups', async () => {
    const { relay, seen, listener } = idleRelay();
    await jest.advanceTimersByTimeAsync(0);
    listener().lost(new Error('connection terminated'));
    await jest.advanceTimersByTimeAsync(INTERVAL_MS);
    expect(seen.passes).toBe(2);

    // What was recorded while it was not listening woke nothing.
    listener().listening();
    await jest.advanceTimersByTimeAsync(0);
    expect(seen.passes).toBe(3);
    await relay.stop();
  });

  it('stops listening when stopped, and a wakeup after that runs nothing', async () => {
    const { relay, seen, listener, closed } = idleRelay();
    await jest.advanceTimersByTimeAsync(0);
    await relay.stop();
    expect(closed()).toBe(true);
    listener().notified();
    await jest.advanceTimersByTimeAsync(INTERVAL_MS);
    expect(seen.passes).toBe(1);
  });
});
