import { ApiClient } from '../lib/api-client';
import { withPostgres } from '../lib/backing-services';
import type { Benchmark } from '../lib/benchmark';
import { runClosedLoop, type ClosedLoopResult } from '../lib/closed-loop';
import { ConversationLane } from '../lib/conversation-lane';
import { CpuMeter } from '../lib/cpu-meter';
import { formatNumber } from '../lib/markdown-report';
import { fillerTokens, scriptedContent } from '../lib/scenario';
import { latencySummary, percentile } from '../lib/stats';
import { startSwitchyard, type SwitchyardStack } from '../lib/switchyard-stack';
import { TimedWsClient } from '../lib/timed-ws-client';
import { TurnTracker, type TurnTiming } from '../lib/turn-tracker';
import { WebhookSink } from '../lib/webhook-sink';
import { WORKLOADS } from '../lib/workloads';

const { tokens, turnsPerConversation, warmupSeconds } = WORKLOADS.turnThroughput;
const { pacedTurnsPerSecond, leadInSeconds, drainTimeoutMs } = WORKLOADS.webhooks;

type Round = 'none' | 'endpoint';

/**
 * Webhooks under load, on the all-in-one (whose worker runs the outbox relay and the delivery
 * jobs beside the turns): the time from a turn's end, as its client sees turn-finish, to its
 * `turn.completed` arriving at a receiver, while turns end at a steady 100/s; and the closed
 * loop's turn throughput with a `turn.completed` endpoint registered against the same loop
 * with none, rounds alternated in one stack so that both meet the same machine.
 */
export const webhookDelivery: Benchmark = {
  name: 'webhook-delivery',
  title: 'Webhooks: event → delivery at 100 turns/s, and turn throughput with an endpoint',
  kind: 'case',
  baselines: [],
  timeoutMs: (options) => 90_000 + options.repetitions * (3 * (options.turnSeconds + leadInSeconds) + 3 * 10) * 1000,
  async run(context, report) {
    const { turnSeconds, turnConcurrency } = context.options;
    report.define('webhooks.lag.p50', { label: `turn-finish → turn.completed at the receiver, ${pacedTurnsPerSecond} turns/s, p50`, unit: 'ms' });
    report.define('webhooks.lag.p99', { label: `turn-finish → turn.completed at the receiver, ${pacedTurnsPerSecond} turns/s, p99`, unit: 'ms' });
    report.define('webhooks.paced.perSecond', { label: 'turns/s of the paced load', unit: 'turns/s' });
    report.define('webhooks.turns.none.perSecond', { label: 'closed loop, no endpoint: turns/s', unit: 'turns/s' });
    report.define('webhooks.turns.endpoint.perSecond', {
      label: 'closed loop, a turn.completed endpoint: turns/s',
      unit: 'turns/s',
      baselineKey: 'webhooks.turns.none.perSecond',
      target: { goal: '(webhooks)', on: 'ratio', op: '>=', value: 0.9 },
    });
    report.define('webhooks.turns.none.p99', { label: 'closed loop, no endpoint: POST → turn-finish, p99', unit: 'ms' });
    report.define('webhooks.turns.endpoint.p99', { label: 'closed loop, a turn.completed endpoint: POST → turn-finish, p99', unit: 'ms', baselineKey: 'webhooks.turns.none.p99' });
    report.define('webhooks.lag.full.p50', { label: 'turn-finish → turn.completed at the receiver, closed loop, p50', unit: 'ms' });
    report.define('webhooks.lag.full.p99', { label: 'turn-finish → turn.completed at the receiver, closed loop, p99', unit: 'ms' });
    report.note(
      `all-in-one with WEBHOOK_ALLOW_PRIVATE_NETWORKS=true (the receiver is on 127.0.0.1) and the default WEBHOOK_RELAY_INTERVAL_MS (1000); ` +
        `the receiver is an http server in the bench process that verifies each signature with the standardwebhooks package and answers 204. ` +
        `${turnConcurrency} lanes of ${tokens}-token turns without tools (as (4)), a new conversation every ${turnsPerConversation} turns. ` +
        `Each repetition: two closed-loop rounds, one with no endpoint and one with a turn.completed endpoint registered (the order alternates), ` +
        `each ${leadInSeconds} s of lead-in then ${turnSeconds} s measured, the endpoint deleted once the round's deliveries all arrived; ` +
        `then ${turnSeconds} s with the endpoint at ${pacedTurnsPerSecond} turns/s (the n-th turn posted at n ÷ ${pacedTurnsPerSecond} s, or when its lane is free), ` +
        `timing each turn's turn-finish at its client to its event's arrival at the receiver, both on the bench process's clock.`,
    );
    const stack = await startSwitchyard(context, { name: 'webhooks', topology: 'all-in-one', env: { WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true' } });
    const api = new ApiClient(stack.url, stack.apiKey);
    const sink = await WebhookSink.start();
    const clients: TimedWsClient[] = [];
    try {
      const tracker = new TurnTracker();
      const lanes: ConversationLane[] = [];
      for (let lane = 0; lane < turnConcurrency; lane++) {
        const client = await TimedWsClient.connect(stack.url, stack.apiKey);
        clients.push(client);
        tracker.listen(client);
        lanes.push(new ConversationLane(client, api, turnsPerConversation));
      }
      const content = scriptedContent(fillerTokens(tokens));
      const load = (durationMs: number, turnsPerSecond?: number) => runClosedLoop({ tracker, lanes, content, durationMs, ...(turnsPerSecond ? { turnsPerSecond } : {}) });
      const registered = async <T>(body: (endpointId: string) => Promise<T>): Promise<T> => {
        const endpointId = await registerEndpoint(api, sink);
        try {
          return await body(endpointId);
        } finally {
          await deleteEndpoint(api, endpointId);
        }
      };
      const delivered = async (result: ClosedLoopResult): Promise<number[]> => {
        await sink.waitForTurns(turnIds(result.timings), drainTimeoutMs);
        return result.timings.map((timing) => sink.arrivals.get(timing.turnId!)! - timing.endedAt!);
      };
      const noteFailures = (what: string, result: ClosedLoopResult) => {
        if (result.failures > 0) report.note(`${what}: ${result.failures} turns failed (first: ${result.firstFailure})`);
      };

      await load(warmupSeconds * 1000);
      const cpu: Partial<Record<Round, string>> = {};
      const pacedStages: DeliveryStage[] = [];
      for (let repetition = 0; repetition < context.options.repetitions; repetition++) {
        const rounds: Round[] = repetition % 2 === 0 ? ['none', 'endpoint'] : ['endpoint', 'none'];
        for (const round of rounds) {
          const measured = async () => {
            await load(leadInSeconds * 1000);
            const meter = await CpuMeter.start(stack.meteredProcesses());
            const result = await load(turnSeconds * 1000);
            const cpuLine = await meter.stop('CPU while measuring', { count: result.latencies.length, unit: 'turn' });
            report.sample(`webhooks.turns.${round}.perSecond`, result.latencies.length / (result.elapsedMs / 1000));
            report.sample(`webhooks.turns.${round}.p99`, latencySummary(result.latencies).p99);
            noteFailures(`repetition ${repetition + 1}, ${round === 'none' ? 'no endpoint' : 'an endpoint'}`, result);
            cpu[round] = cpuLine;
            return result;
          };
          if (round === 'none') {
            await measured();
            continue;
          }
          await registered(async () => {
            const lags = latencySummary(await delivered(await measured()));
            report.sample('webhooks.lag.full.p50', lags.p50);
            report.sample('webhooks.lag.full.p99', lags.p99);
          });
        }
        await registered(async (endpointId) => {
          const result = await load(turnSeconds * 1000, pacedTurnsPerSecond);
          noteFailures(`repetition ${repetition + 1}, paced`, result);
          report.sample('webhooks.paced.perSecond', result.latencies.length / (result.elapsedMs / 1000));
          const lags = latencySummary(await delivered(result));
          report.sample('webhooks.lag.p50', lags.p50);
          report.sample('webhooks.lag.p99', lags.p99);
          pacedStages.push(...(await deliveryStages(stack, endpointId, result.timings, sink)));
        });
      }
      if (sink.rejected > 0) throw new Error(`${sink.rejected} deliveries failed the receiver's signature check`);
      report.note(`no endpoint, last round: ${cpu.none}`);
      report.note(`an endpoint, last round: ${cpu.endpoint}`);
      report.note(stageBreakdown(pacedStages));
    } finally {
      await Promise.all(clients.map((client) => client.close()));
      api.close();
      await sink.close();
      await stack.stop();
    }
  },
};

async function registerEndpoint(api: ApiClient, sink: WebhookSink): Promise<string> {
  const response = await api.request('POST', '/v1/webhooks', { url: sink.url, events: ['turn.completed'], description: 'bench' });
  if (response.status !== 201) throw new Error(`POST /v1/webhooks answered ${response.status}: ${JSON.stringify(response.body)}`);
  sink.useSecret(response.body.secret as string);
  return response.body.id as string;
}

async function deleteEndpoint(api: ApiClient, endpointId: string): Promise<void> {
  const response = await api.request('DELETE', `/v1/webhooks/${endpointId}`);
  if (response.status !== 200) throw new Error(`DELETE /v1/webhooks/${endpointId} answered ${response.status}: ${JSON.stringify(response.body)}`);
}

const turnIds = (timings: TurnTiming[]): string[] => timings.map((timing) => timing.turnId!);

/** One delivery's moments, in ms of wall-clock time (the database's and this process's clocks are the machine's). */
interface DeliveryStage {
  /** The trigger's clock_timestamp() in the commit that ended the turn. */
  recordedAt: number;
  finishSeenAt: number;
  /**
   * When the relay pass that added the job marked it enqueued, after adding its whole batch
   * (NaN while that pass is still adding: its jobs may have run already).
   */
  enqueuedAt: number;
  arrivedAt: number;
  /** When the attempt's success was recorded. */
  deliveredAt: number;
}

/** The stored moments of the endpoint's deliveries of these turns, beside the bench's. Read before the endpoint is deleted. */
async function deliveryStages(stack: SwitchyardStack, endpointId: string, timings: TurnTiming[], sink: WebhookSink): Promise<DeliveryStage[]> {
  const rows = await withPostgres(async (client) => {
    const { rows } = await client.query<{ turn_id: string; recorded: number; enqueued: number | null; delivered: number }>(
      `SELECT payload->'data'->>'turnId' AS turn_id,
              extract(epoch FROM created_at) * 1000 AS recorded,
              extract(epoch FROM enqueued_at) * 1000 AS enqueued,
              extract(epoch FROM delivered_at) * 1000 AS delivered
         FROM "${stack.schema}".webhook_deliveries
        WHERE endpoint_id = $1 AND status = 'delivered'`,
      [endpointId],
    );
    return new Map(rows.map((row) => [row.turn_id, row]));
  });
  const wall = (monotonic: number) => performance.timeOrigin + monotonic;
  return timings.flatMap((timing) => {
    const row = rows.get(timing.turnId!);
    const arrivedAt = sink.arrivals.get(timing.turnId!);
    if (!row || arrivedAt === undefined) return [];
    return [
      {
        recordedAt: Number(row.recorded),
        finishSeenAt: wall(timing.endedAt!),
        enqueuedAt: row.enqueued === null ? Number.NaN : Number(row.enqueued),
        arrivedAt: wall(arrivedAt),
        deliveredAt: Number(row.delivered),
      },
    ];
  });
}

const STAGES: [label: string, from: keyof DeliveryStage, to: keyof DeliveryStage][] = [
  ['event recorded → client sees turn-finish', 'recordedAt', 'finishSeenAt'],
  ['event recorded → relay pass marked it enqueued', 'recordedAt', 'enqueuedAt'],
  ['marked enqueued → receiver (negative: the job ran before its pass ended)', 'enqueuedAt', 'arrivedAt'],
  ['receiver → success recorded', 'arrivedAt', 'deliveredAt'],
  ['event recorded → receiver', 'recordedAt', 'arrivedAt'],
];

/** "Where the time goes" between a turn's end and its webhook, p50 / p99 per stretch. */
function stageBreakdown(stages: DeliveryStage[]): string {
  const parts = STAGES.map(([label, from, to]) => {
    const durations = stages.map((stage) => stage[to] - stage[from]).filter(Number.isFinite);
    return `${label} ${formatNumber(percentile(durations, 50))} / ${formatNumber(percentile(durations, 99))} ms`;
  });
  return `where the time goes at ${pacedTurnsPerSecond} turns/s, p50 / p99 over ${stages.length} deliveries (PostgreSQL's clock and this process's, one machine): ${parts.join('; ')}.`;
}
