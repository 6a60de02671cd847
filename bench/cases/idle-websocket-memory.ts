import { execFileSync } from 'node:child_process';
import type { Benchmark } from '../lib/benchmark';
import { sleep } from '../lib/clock';
import { heapUsedBytes } from '../lib/metrics-page';
import { rssMiB } from '../lib/process-usage';
import { insertConversations } from '../lib/stack-seed';
import { median } from '../lib/stats';
import { startSwitchyard, type SwitchyardStack } from '../lib/switchyard-stack';
import { connectMany, type TimedWsClient } from '../lib/timed-ws-client';
import { curveRepetitions, WORKLOADS } from '../lib/workloads';

const { connections } = WORKLOADS.idleWebsockets;
const MOST = Math.max(...connections);
/** Descriptors the bench process needs beside its websocket clients (Redis, PostgreSQL, logs, child pipes). */
const SPARE_DESCRIPTORS = 500;

/**
 * How the gateway's memory grows with the connections it holds: RSS and V8 heap of the
 * all-in-one process before and after opening N authenticated websocket connections, each
 * subscribed to a conversation of its own and then idle, divided by N.
 */
export const idleWebsocketMemory: Benchmark = {
  name: 'ws-memory',
  title: 'Curve: memory per idle websocket connection',
  kind: 'case',
  timeoutMs: (options) => 30_000 + curveRepetitions(options) * 150_000,
  async run(context, report) {
    const repetitions = curveRepetitions(context.options);
    // The clients live in this process and the server side in the service process: each holds a descriptor per connection.
    const limit = openFileLimit();
    if (limit < MOST + SPARE_DESCRIPTORS) {
      throw new Error(
        `${MOST.toLocaleString('en-US')} connections need at least ${MOST + SPARE_DESCRIPTORS} open files per process and \`ulimit -n\` is ${limit}: ` +
          `run \`ulimit -n ${MOST + SPARE_DESCRIPTORS}\` (or more) in the shell that starts npm run bench`,
      );
    }
    report.note(
      `all-in-one, default settings, a new one per repetition (${repetitions}; one ramp each, since memory a process has taken is not handed back ` +
        `when connections close). After a warm-up of 100 connections opened, subscribed and closed, the process's RSS (/proc) and V8 heap in use ` +
        `(its /metrics) are read; then connections are opened (from the bench process, 50 handshakes at a time, each authenticated with the API key) ` +
        `up to ${connections.map((count) => count.toLocaleString('en-US')).join(' and then ')}, each subscribed to a conversation of its own ` +
        '(made with one INSERT), and read again once idle (the median of three readings 0.5 s apart, 1 s after the last subscription). ' +
        'Per connection = growth since the first reading ÷ connections open. Garbage not yet collected counts, so the heap figure is noisy; ' +
        `the bench process needs \`ulimit -n\` ≥ ${MOST + SPARE_DESCRIPTORS} (here ${limit}).`,
    );
    for (const count of connections) {
      const label = `${count.toLocaleString('en-US')} connections`;
      report.define(`curve.wsMemory.c${count}.rssPerConnection`, { label: `${label}: RSS growth per connection`, unit: 'KiB' });
      report.define(`curve.wsMemory.c${count}.heapPerConnection`, { label: `${label}: V8 heap growth per connection`, unit: 'KiB' });
      report.define(`curve.wsMemory.c${count}.rss`, { label: `${label}: RSS of the all-in-one`, unit: 'MiB' });
    }
    report.define('curve.wsMemory.rssBefore', { label: 'RSS of the all-in-one before the connections', unit: 'MiB' });
    report.curve({
      id: 'ws-memory',
      title: 'Memory per idle, subscribed websocket connection (all-in-one)',
      x: { label: 'connections open', log: true },
      y: { label: 'growth per connection', unit: 'KiB' },
      series: [
        { name: 'RSS', points: connections.map((count) => ({ x: count, key: `curve.wsMemory.c${count}.rssPerConnection` })) },
        { name: 'V8 heap in use', points: connections.map((count) => ({ x: count, key: `curve.wsMemory.c${count}.heapPerConnection` })) },
      ],
    });

    for (let repetition = 0; repetition < repetitions; repetition++) {
      const stack = await startSwitchyard(context, { name: `ws-memory-${repetition + 1}`, topology: 'all-in-one' });
      const clients: TimedWsClient[] = [];
      try {
        const conversations = await insertConversations(stack.schema, MOST);
        const warmup = await connectMany(stack.url, stack.apiKey, 100);
        await subscribeAll(warmup, conversations);
        await Promise.all(warmup.map((client) => client.close()));
        const before = await footprint(stack);
        report.sample('curve.wsMemory.rssBefore', before.rssMiB);
        for (const count of connections) {
          const opened = await connectMany(stack.url, stack.apiKey, count - clients.length);
          await subscribeAll(opened, conversations.slice(clients.length));
          clients.push(...opened);
          const after = await footprint(stack);
          const closed = clients.filter((client) => client.closed).length;
          if (closed > 0) report.note(`repetition ${repetition + 1}: ${closed} of ${count} connections were closed by the server while idle`);
          report.sample(`curve.wsMemory.c${count}.rssPerConnection`, ((after.rssMiB - before.rssMiB) * 1024) / count);
          report.sample(`curve.wsMemory.c${count}.heapPerConnection`, ((after.heapMiB - before.heapMiB) * 1024) / count);
          report.sample(`curve.wsMemory.c${count}.rss`, after.rssMiB);
        }
      } finally {
        await Promise.all(clients.map((client) => client.close()));
        await stack.stop();
      }
    }
  },
};

/** Subscribes client i to conversation i, a hundred subscriptions at a time. */
async function subscribeAll(clients: TimedWsClient[], conversations: string[]): Promise<void> {
  for (let start = 0; start < clients.length; start += 100) {
    await Promise.all(clients.slice(start, start + 100).map((client, index) => client.subscribe(conversations[start + index]!)));
  }
}

/** RSS and V8 heap in use of the all-in-one once idle: the median of three readings. */
async function footprint(stack: SwitchyardStack): Promise<{ rssMiB: number; heapMiB: number }> {
  const pid = stack.services[0]!.process.pid;
  await sleep(1000);
  const rss: number[] = [];
  const heap: number[] = [];
  for (let reading = 0; reading < 3; reading++) {
    if (reading > 0) await sleep(500);
    rss.push(rssMiB(pid));
    heap.push((await heapUsedBytes(`${stack.url}/metrics`)) / 2 ** 20);
  }
  return { rssMiB: median(rss), heapMiB: median(heap) };
}

/** The soft limit on open files this process (and the service processes it starts) has. */
function openFileLimit(): number {
  const output = execFileSync('sh', ['-c', 'ulimit -n'], { encoding: 'utf8' }).trim();
  return output === 'unlimited' ? Number.POSITIVE_INFINITY : Number(output);
}
