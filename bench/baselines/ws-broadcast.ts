import type { Benchmark } from '../lib/benchmark';
import { startChild } from '../lib/child-process';
import { CpuMeter } from '../lib/cpu-meter';
import { now, withTimeout } from '../lib/clock';
import { FanOutCounter } from '../lib/fan-out-counter';
import { connectMany } from '../lib/timed-ws-client';
import { WORKLOADS } from '../lib/workloads';

const { clients, tokens } = WORKLOADS.websocketFanOut;

/** A plain `ws` server in its own process sending one-token frames to many local clients. */
export const wsBroadcast: Benchmark = {
  name: 'ws-broadcast',
  title: `Raw ws: broadcast to ${clients} clients`,
  kind: 'baseline',
  timeoutMs: 120_000,
  async run(context, report) {
    report.define('ws.broadcast.tokensPerSecond', {
      label: 'tokens delivered/s in total (clients × tokens ÷ broadcast request → last frame at the last client)',
      unit: 'tokens/s',
    });
    report.define('ws.broadcast.firstToLast', { label: 'tokens delivered/s in total, first → last text frame at any client', unit: 'tokens/s' });
    report.define('ws.broadcast.framesPerSecond', { label: 'text frames delivered/s in total (first → last)', unit: 'frames/s' });
    report.define('ws.broadcast.endToEndMs', { label: 'broadcast request → last frame at the last client', unit: 'ms' });
    report.note(`${tokens} frames of one token each to ${clients} clients (all in the bench process) per repetition; the server runs in its own process.`);
    const server = await startChild({
      name: 'ws-broadcast-server',
      entry: 'bench/baselines/ws-broadcast-server.ts',
      env: { PORT: '0' },
      logDir: context.logDir,
      ready: { stdout: /listening on (\d+)/ },
    });
    const url = `http://127.0.0.1:${server.match![1]}`;
    const sockets = await connectMany(url, 'none', clients);
    const meter = await CpuMeter.start([{ name: 'ws server', pid: server.pid }]);
    try {
      for (let repetition = 0; repetition < context.options.repetitions; repetition++) {
        const counter = new FanOutCounter(sockets);
        const startedAt = now();
        sockets[0]!.sendRaw({ type: 'broadcast', messages: tokens });
        await withTimeout(counter.allFinished, 60_000, 'the broadcast to reach every client');
        const result = counter.result();
        if (result.incompleteClients > 0) report.note(`repetition ${repetition + 1}: ${result.incompleteClients} clients missed frames`);
        report.sample('ws.broadcast.tokensPerSecond', (clients * tokens) / ((result.lastDeltaAt - startedAt) / 1000));
        report.sample('ws.broadcast.firstToLast', (clients * tokens) / (result.spanMs / 1000));
        report.sample('ws.broadcast.framesPerSecond', result.deltaFrames / (result.spanMs / 1000));
        report.sample('ws.broadcast.endToEndMs', result.lastDeltaAt - startedAt);
      }
      report.note(await meter.stop());
    } finally {
      await Promise.all(sockets.map((socket) => socket.close()));
      await server.stop();
    }
  },
};
