import { ApiClient } from '../lib/api-client';
import type { Benchmark } from '../lib/benchmark';
import { now } from '../lib/clock';
import { ConversationLane } from '../lib/conversation-lane';
import { CpuMeter } from '../lib/cpu-meter';
import { fillerTokens, scriptedContent } from '../lib/scenario';
import { latencySummary } from '../lib/stats';
import { startSwitchyard } from '../lib/switchyard-stack';
import { TimedWsClient } from '../lib/timed-ws-client';
import { TurnTracker } from '../lib/turn-tracker';
import { waitForFinish } from '../lib/batch-finish';

const ITEMS = 2_000;
/** The largest batch: its submission is timed alone, and the batch cancelled. */
const LARGEST_ITEMS = 50_000;
const TOKENS = 20;
const CONCURRENCY = 8;
/** Interactive turns timed while idle, then while the batch runs. */
const INTERACTIVE_TURNS = 40;

/**
 * (8) A 2,000-item batch of short answers: the time to accept the submission and items/s end to
 * to end, beside the turn throughput of the same run; (9) interactive time to first token while
 * that batch runs, as a ratio to the idle figure measured just before it.
 */
export const batchThroughput: Benchmark = {
  name: 'batch',
  title: '(8) Batch of 2,000 short answers, and (9) interactive TTFT while it runs',
  kind: 'case',
  baselines: [],
  timeoutMs: 300_000,
  async run(context, report) {
    report.define('batch.acceptMs', { label: `POST /v1/batches of ${ITEMS} items (JSONL) → 202`, unit: 'ms' });
    report.define('batch.largest.acceptMs', {
      label: `POST /v1/batches of ${LARGEST_ITEMS.toLocaleString('en-US')} one-line items (JSONL) → 202 (the batch then cancelled)`,
      unit: 'ms',
    });
    report.define('batch.itemsPerSecond', { label: 'all-in-one: items/s, submission → batch-finish', unit: 'items/s', baselineKey: 'turns.aio.perSecond' });
    report.define('batch.ttft.idle.p50', { label: 'interactive POST → first text-delta, idle, p50', unit: 'ms' });
    report.define('batch.ttft.busy.p50', {
      label: 'interactive POST → first text-delta while the batch runs, p50',
      unit: 'ms',
      baselineKey: 'batch.ttft.idle.p50',
      target: { goal: '(9)', on: 'ratio', op: '<=', value: 1.5 },
    });
    report.note(
      `all-in-one, default settings but BATCH_TURNS_PER_WORKER=1 (the scripted model's turns are all CPU for this machine, the case the README gives 1–2 for); ${ITEMS} items of one ${TOKENS}-token answer, concurrency ${CONCURRENCY}, submitted as one JSONL request; ` +
        `${INTERACTIVE_TURNS} sequential interactive turns of ${TOKENS} tokens timed idle, then again while the batch runs. ` +
        `items/s is compared with the all-in-one turns/s of (4) in the same run.`,
    );
    const repetitions = Math.min(context.options.repetitions, 2);
    // The scripted model's turns are all CPU for this machine: the setting the README gives for such turns.
    const stack = await startSwitchyard(context, { name: 'batch', topology: 'all-in-one', env: { BATCH_TURNS_PER_WORKER: '1' } });
    const api = new ApiClient(stack.url, stack.apiKey);
    const client = await TimedWsClient.connect(stack.url, stack.apiKey);
    try {
      const tracker = new TurnTracker();
      tracker.listen(client);
      const lane = new ConversationLane(client, api, 10);
      const content = scriptedContent(fillerTokens(TOKENS));
      const interactiveTtft = async (whileRunning: () => boolean = () => true): Promise<number[]> => {
        const latencies: number[] = [];
        for (let index = 0; index < INTERACTIVE_TURNS && whileRunning(); index++) {
          const timing = await tracker.runTurn(api, await lane.next(), content);
          if (timing.firstDeltaAt !== undefined) latencies.push(timing.firstDeltaAt - timing.postedAt);
        }
        return latencies;
      };
      await interactiveTtft();
      const body = Array.from({ length: ITEMS }, (_, i) => JSON.stringify({ customId: `i${i}`, messages: [scriptedContent(fillerTokens(TOKENS), `item ${i}`)] })).join('\n');
      const meter = await CpuMeter.start(stack.meteredProcesses());
      for (let repetition = 0; repetition < repetitions; repetition++) {
        report.sample('batch.ttft.idle.p50', latencySummary(await interactiveTtft()).p50);
        const submittedAt = now();
        const batch = await submitJsonl(stack.url, stack.apiKey, body, CONCURRENCY);
        report.sample('batch.acceptMs', batch.acceptMs);
        let running = true;
        const finished = waitForFinish(stack.url, stack.apiKey, batch.batchId).finally(() => (running = false));
        const busy = await interactiveTtft(() => running);
        const finish = await finished;
        if (finish.counts.succeeded !== ITEMS) throw new Error(`the batch ended with ${JSON.stringify(finish.counts)}`);
        report.sample('batch.itemsPerSecond', ITEMS / ((now() - submittedAt) / 1000));
        if (busy.length >= 10) report.sample('batch.ttft.busy.p50', latencySummary(busy).p50);
      }
      report.note(await meter.stop('CPU while measuring', { count: repetitions * ITEMS, unit: 'item' }));
      report.sample('batch.largest.acceptMs', await timeLargestSubmission(stack.url, stack.apiKey));
    } finally {
      await client.close();
      api.close();
      await stack.stop();
    }
  },
};

/** POSTs a batch of LARGEST_ITEMS one-line items, then cancels it: how long the submission took. */
async function timeLargestSubmission(url: string, apiKey: string): Promise<number> {
  const body = Array.from({ length: LARGEST_ITEMS }, (_, i) => JSON.stringify({ customId: `big-${i}`, messages: [`item ${i}: one short question`] })).join('\n');
  const batch = await submitJsonl(url, apiKey, body, 1);
  await fetch(`${url}/v1/batches/${batch.batchId}/cancel`, { method: 'POST', headers: { authorization: `Bearer ${apiKey}` } });
  return batch.acceptMs;
}

/** POST /v1/batches of a JSONL body: the batch's id and how long the API took to accept it (202). */
async function submitJsonl(url: string, apiKey: string, body: string, concurrency: number): Promise<{ batchId: string; acceptMs: number }> {
  const submittedAt = now();
  const response = await fetch(`${url}/v1/batches?concurrency=${concurrency}`, {
    method: 'POST',
    headers: { authorization: `Bearer ${apiKey}`, 'content-type': 'application/x-ndjson' },
    body,
  });
  const acceptMs = now() - submittedAt;
  const answer = (await response.json()) as { batchId: string };
  if (response.status !== 202) throw new Error(`the batch was refused: ${response.status} ${JSON.stringify(answer)}`);
  return { batchId: answer.batchId, acceptMs };
}
