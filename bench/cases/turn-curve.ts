import { ApiClient } from '../lib/api-client';
import type { Benchmark } from '../lib/benchmark';
import { runClosedLoop } from '../lib/closed-loop';
import { ConversationLane } from '../lib/conversation-lane';
import { CpuMeter } from '../lib/cpu-meter';
import { fillerTokens, scriptedContent } from '../lib/scenario';
import { latencySummary } from '../lib/stats';
import { startSwitchyard } from '../lib/switchyard-stack';
import { connectMany } from '../lib/timed-ws-client';
import { TurnTracker } from '../lib/turn-tracker';
import { curveRepetitions, WORKLOADS } from '../lib/workloads';

const { inFlight, tokens, turnsPerConversation, secondsPerRepetition, warmupSeconds } = WORKLOADS.turnCurve;

/**
 * How the cost of a turn grows with the turns in flight: the closed loop of (4) on the
 * all-in-one at 1, 4, 16, 64 and 256 lanes, each lane with its own websocket client.
 */
export const turnCurve: Benchmark = {
  name: 'turn-curve',
  title: 'Curve: turns/s and POST → turn-finish by turns in flight (all-in-one)',
  kind: 'case',
  timeoutMs: (options) => 60_000 + inFlight.length * (warmupSeconds + curveRepetitions(options) * secondsPerRepetition + 30) * 1000,
  async run(context, report) {
    const repetitions = curveRepetitions(context.options);
    report.note(
      `all-in-one, default settings; the closed loop of (4) (${tokens}-token answers, no tools, a new conversation every ${turnsPerConversation} turns ` +
        `per lane) at ${inFlight.join(', ')} lanes, each lane its own websocket client; per point ${warmupSeconds} s of warm-up, then ` +
        `${repetitions} repetition(s) of ${secondsPerRepetition} s (fewer and shorter than (4)'s, to keep the suite within its budget: ` +
        'the points are for the shape of the curve, (4) is the target). turns/s = turns finished ÷ time until the last of them finished.',
    );
    for (const lanes of inFlight) {
      report.define(`curve.turns.l${lanes}.perSecond`, { label: `${lanes} in flight: turns/s`, unit: 'turns/s' });
      report.define(`curve.turns.l${lanes}.p50`, { label: `${lanes} in flight: POST → turn-finish, p50`, unit: 'ms' });
      report.define(`curve.turns.l${lanes}.p99`, { label: `${lanes} in flight: POST → turn-finish, p99`, unit: 'ms' });
    }
    report.curve({
      id: 'turns-per-second',
      title: 'Turns/s by turns in flight (all-in-one)',
      x: { label: 'turns in flight', log: true },
      y: { label: 'turns finished per second', unit: 'turns/s' },
      series: [{ name: 'Switchyard all-in-one', points: inFlight.map((lanes) => ({ x: lanes, key: `curve.turns.l${lanes}.perSecond` })) }],
    });
    report.curve({
      id: 'turn-latency',
      title: 'POST → turn-finish by turns in flight (all-in-one)',
      x: { label: 'turns in flight', log: true },
      y: { label: 'POST → turn-finish', unit: 'ms', log: true },
      series: (['p50', 'p99'] as const).map((percentile) => ({
        name: percentile,
        points: inFlight.map((lanes) => ({ x: lanes, key: `curve.turns.l${lanes}.${percentile}` })),
      })),
    });

    const stack = await startSwitchyard(context, { name: 'turn-curve', topology: 'all-in-one' });
    const api = new ApiClient(stack.url, stack.apiKey);
    const clients = await connectMany(stack.url, stack.apiKey, Math.max(...inFlight));
    try {
      const tracker = new TurnTracker();
      for (const client of clients) tracker.listen(client);
      const allLanes = clients.map((client) => new ConversationLane(client, api, turnsPerConversation));
      const content = scriptedContent(fillerTokens(tokens));
      for (const lanes of inFlight) {
        const used = allLanes.slice(0, lanes);
        await runClosedLoop({ tracker, lanes: used, content, durationMs: warmupSeconds * 1000 });
        const meter = await CpuMeter.start(stack.meteredProcesses());
        let turns = 0;
        for (let repetition = 0; repetition < repetitions; repetition++) {
          const result = await runClosedLoop({ tracker, lanes: used, content, durationMs: secondsPerRepetition * 1000 });
          turns += result.latencies.length;
          const summary = latencySummary(result.latencies);
          report.sample(`curve.turns.l${lanes}.perSecond`, result.latencies.length / (result.elapsedMs / 1000));
          report.sample(`curve.turns.l${lanes}.p50`, summary.p50);
          report.sample(`curve.turns.l${lanes}.p99`, summary.p99);
          if (result.failures > 0) report.note(`${lanes} in flight, repetition ${repetition + 1}: ${result.failures} turns failed (first: ${result.firstFailure})`);
        }
        report.note(`${lanes} in flight: ${await meter.stop('CPU while measuring', { count: turns, unit: 'turn' })}`);
      }
    } finally {
      await Promise.all(clients.map((client) => client.close()));
      api.close();
      await stack.stop();
    }
  },
};
