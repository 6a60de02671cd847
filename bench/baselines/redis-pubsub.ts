import type { Benchmark } from '../lib/benchmark';
import { connectRedis } from '../lib/backing-services';
import { now } from '../lib/clock';
import { latencySummary } from '../lib/stats';

const SEQUENTIAL_MESSAGES = 1000;
const BURST_MESSAGES = 20_000;
/** About the size of a one-token text-delta event. */
const MESSAGE = JSON.stringify({
  seq: 1,
  type: 'text-delta',
  delta: ' lorem',
  conversationId: 'conv_00000000-0000-0000-0000-000000000000',
  turnId: 'turn_00000000-0000-0000-0000-000000000000',
});

/** The Redis hop under every live event: PUBLISH on one connection → message on a subscriber. */
export const redisPubSub: Benchmark = {
  name: 'redis-pubsub',
  title: 'Raw Redis: publish → receive',
  kind: 'baseline',
  timeoutMs: 60_000,
  async run(context, report) {
    report.define('redis.pubsub.p50', { label: 'publish → message received, one at a time, p50', unit: 'ms' });
    report.define('redis.pubsub.p99', { label: 'publish → message received, one at a time, p99', unit: 'ms' });
    report.define('redis.pubsub.messagesPerSecond', { label: `burst of ${BURST_MESSAGES} pipelined publishes, received/s`, unit: 'msgs/s' });
    report.note(`${SEQUENTIAL_MESSAGES} sequential messages, then a burst of ${BURST_MESSAGES}; ${MESSAGE.length}-byte messages (a one-token event).`);
    const channel = `${context.redisPrefix}-raw-pubsub`;
    const publisher = connectRedis();
    const subscriber = connectRedis();
    let onMessage: () => void = () => undefined;
    subscriber.on('message', () => onMessage());
    await subscriber.subscribe(channel);
    try {
      for (let repetition = 0; repetition < context.options.repetitions; repetition++) {
        const latencies: number[] = [];
        for (let index = 0; index < SEQUENTIAL_MESSAGES; index++) {
          const received = new Promise<void>((resolve) => (onMessage = resolve));
          const startedAt = now();
          await publisher.publish(channel, MESSAGE);
          await received;
          latencies.push(now() - startedAt);
        }
        const summary = latencySummary(latencies);
        report.sample('redis.pubsub.p50', summary.p50);
        report.sample('redis.pubsub.p99', summary.p99);

        let count = 0;
        const all = new Promise<void>((resolve) => (onMessage = () => ++count === BURST_MESSAGES && resolve()));
        const startedAt = now();
        const pipeline = publisher.pipeline();
        for (let index = 0; index < BURST_MESSAGES; index++) pipeline.publish(channel, MESSAGE);
        await pipeline.exec();
        await all;
        report.sample('redis.pubsub.messagesPerSecond', BURST_MESSAGES / ((now() - startedAt) / 1000));
      }
    } finally {
      publisher.disconnect();
      subscriber.disconnect();
    }
  },
};
