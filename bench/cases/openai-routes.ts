import OpenAI, { toFile } from 'openai';
import { ApiClient } from '../lib/api-client';
import type { Benchmark, ReportBuilder } from '../lib/benchmark';
import { now } from '../lib/clock';
import { CpuMeter } from '../lib/cpu-meter';
import { createDirectClient, streamDirect } from '../lib/direct-stream';
import type { RunContext } from '../lib/run-context';
import { fillerTokens, scriptedContent } from '../lib/scenario';
import { latencySummary } from '../lib/stats';
import { startSwitchyard, type SwitchyardStack } from '../lib/switchyard-stack';
import { WORKLOADS } from '../lib/workloads';
import { waitForFinish } from '../lib/batch-finish';

const { tokens: TTFT_TOKENS, warmup: TTFT_WARMUP } = WORKLOADS.ttft;
const TTFT_ROUNDS = 60;
const { tokens: STREAM_TOKENS } = WORKLOADS.singleStream;
const BATCH_LINES = 2_000;
const BATCH_TOKENS = 20;

/**
 * The OpenAI-compatible routes beside the native ones, each pair interleaved in one stack so that
 * both sides meet the same moments of a noisy machine: the first `response.output_text.delta`
 * through OpenAI's SDK against Switchyard's own SSE (`GET /v1/turns/:id/events`) and the direct
 * provider; one 5,000-token response's tokens/s against the direct SDK; a 2,000-line OpenAI
 * batch's items/s against the same batch submitted natively.
 */
export const openAiRoutes: Benchmark = {
  name: 'openai',
  title: 'OpenAI-compatible routes: first delta, one long stream, a 2,000-line batch',
  kind: 'case',
  baselines: [],
  timeoutMs: 600_000,
  async run(context, report) {
    report.note(
      `all-in-one, default settings. First delta: ${TTFT_ROUNDS} rounds per repetition of ${TTFT_TOKENS}-token answers, each round one request of each ` +
        'kind in turn: the direct SDK (chat.completions, stream), a native turn (POST turn on a conversation made before, then its SSE ' +
        'read to its first text-delta; timed from the POST), `responses.create({stream: true})` through the SDK (timed from the call: ' +
        "it makes its conversation, as a Responses user's request does), and `chat.completions.create({stream: true})` through the SDK " +
        'against Switchyard (a turn of a new conversation each). Long stream: one ' +
        `${STREAM_TOKENS}-token answer each way per repetition, tokens ÷ (request → last text). Batch: ${BATCH_LINES} one-line items of ` +
        `${BATCH_TOKENS} tokens, native (POST /v1/batches JSONL, concurrency 8) then OpenAI (upload, batches.create, batch-finish on the ` +
        'same id, then batches.retrieve writing the output file), items ÷ (submission → output ready).',
    );
    const stack = await startSwitchyard(context, { name: 'openai', topology: 'all-in-one' });
    const api = new ApiClient(stack.url, stack.apiKey);
    const openai = new OpenAI({ baseURL: `${stack.url}/openai/v1`, apiKey: stack.apiKey, maxRetries: 0 });
    const direct = createDirectClient(context.scriptedModelUrl);
    try {
      const meter = await CpuMeter.start(stack.meteredProcesses());
      await firstDelta(context, report, stack, api, openai, direct);
      await longStream(context, report, openai, direct);
      await batches(context, report, stack, openai);
      report.note(await meter.stop('CPU while measuring (all three parts)'));
    } finally {
      api.close();
      await stack.stop();
    }
  },
};

async function firstDelta(context: RunContext, report: ReportBuilder, stack: SwitchyardStack, api: ApiClient, openai: OpenAI, direct: OpenAI): Promise<void> {
  report.define('openai.ttft.p50', { label: 'responses.create(stream) → first response.output_text.delta (SDK), p50', unit: 'ms', baselineKey: 'openai.ownSse.ttft.p50' });
  report.define('openai.ttft.vsOwn.p50', {
    label: "p50 gap: the SDK's first output_text.delta − the native SSE's first text-delta",
    unit: 'ms',
    target: { goal: 'issue 26', on: 'value', op: '<=', value: 1 },
  });
  report.define('openai.ttft.p99', { label: 'responses.create(stream) → first output_text.delta, p99', unit: 'ms', baselineKey: 'openai.ownSse.ttft.p99' });
  report.define('openai.ownSse.ttft.p50', { label: 'native: POST turn → first text-delta on GET /v1/turns/:id/events, p50', unit: 'ms', baselineKey: 'openai.direct.ttft.p50' });
  report.define('openai.ownSse.ttft.p99', { label: 'native: POST turn → first text-delta on its SSE, p99', unit: 'ms' });
  report.define('openai.direct.ttft.p50', { label: 'direct SDK (interleaved): request → first text chunk, p50', unit: 'ms' });
  report.define('openai.chat.ttft.p50', {
    label: 'chat.completions.create(stream) through the SDK → first content delta, p50',
    unit: 'ms',
    baselineKey: 'openai.direct.ttft.p50',
  });
  report.define('openai.chat.ttft.p99', { label: 'chat.completions.create(stream) → first content delta, p99', unit: 'ms' });
  report.define('openai.vsDirect.p50', { label: "responses.create(stream) → first delta, p50, against the direct SDK's", unit: 'ms', baselineKey: 'openai.direct.ttft.p50' });
  const scenario = fillerTokens(TTFT_TOKENS);
  const content = scriptedContent(scenario);
  let conversationId = await api.createConversation();
  let turnsOnIt = 0;
  const native = async () => {
    if (turnsOnIt++ === 10) {
      conversationId = await api.createConversation();
      turnsOnIt = 1;
    }
    const startedAt = now();
    const turnId = await api.postTurn(conversationId, content);
    const response = await fetch(`${stack.url}/v1/turns/${turnId}/events`, { headers: { authorization: `Bearer ${stack.apiKey}` } });
    const firstAt = await readUntil(response, 'event: text-delta', 'event: turn-finish');
    return firstAt - startedAt;
  };
  const viaSdk = async () => {
    const startedAt = now();
    let firstAt = 0;
    for await (const event of await openai.responses.create({ input: content, stream: true })) {
      if (event.type === 'response.output_text.delta' && firstAt === 0) firstAt = now();
    }
    return firstAt - startedAt;
  };
  // Switchyard's Chat Completions route: a turn of a new conversation with the messages given whole.
  const viaChat = async () => {
    const startedAt = now();
    let firstAt = 0;
    for await (const chunk of await openai.chat.completions.create({ model: 'scripted', messages: [{ role: 'user', content }], stream: true })) {
      if (chunk.choices[0]?.delta?.content && firstAt === 0) firstAt = now();
    }
    return firstAt - startedAt;
  };
  const viaDirect = async () => {
    const timing = await streamDirect(direct, scenario);
    return timing.firstTokenAt! - timing.startedAt;
  };
  for (let index = 0; index < TTFT_WARMUP; index++) {
    await native();
    await viaSdk();
    await viaChat();
    await viaDirect();
  }
  for (let repetition = 0; repetition < context.options.repetitions; repetition++) {
    const own: number[] = [];
    const sdk: number[] = [];
    const straight: number[] = [];
    const chat: number[] = [];
    const sides = [
      { run: native, into: own },
      { run: viaSdk, into: sdk },
      { run: viaChat, into: chat },
      { run: viaDirect, into: straight },
    ];
    for (let round = 0; round < TTFT_ROUNDS; round++) {
      // The order turns each round: no side always follows the same one.
      for (let step = 0; step < sides.length; step++) {
        const side = sides[(round + step) % sides.length]!;
        side.into.push(await side.run());
      }
    }
    const ownSummary = latencySummary(own);
    const sdkSummary = latencySummary(sdk);
    const directSummary = latencySummary(straight);
    report.sample('openai.ttft.p50', sdkSummary.p50);
    report.sample('openai.ttft.p99', sdkSummary.p99);
    report.sample('openai.ttft.vsOwn.p50', sdkSummary.p50 - ownSummary.p50);
    report.sample('openai.ownSse.ttft.p50', ownSummary.p50);
    report.sample('openai.ownSse.ttft.p99', ownSummary.p99);
    report.sample('openai.direct.ttft.p50', directSummary.p50);
    report.sample('openai.vsDirect.p50', sdkSummary.p50);
    const chatSummary = latencySummary(chat);
    report.sample('openai.chat.ttft.p50', chatSummary.p50);
    report.sample('openai.chat.ttft.p99', chatSummary.p99);
  }
}

async function longStream(context: RunContext, report: ReportBuilder, openai: OpenAI, direct: OpenAI): Promise<void> {
  report.define('openai.stream.tokensPerSecond', {
    label: `one ${STREAM_TOKENS}-token response through the SDK: tokens/s (request → last output_text.delta)`,
    unit: 'tokens/s',
    baselineKey: 'openai.stream.direct.tokensPerSecond',
    target: { goal: 'issue 26', on: 'ratio', op: '>=', value: 0.8 },
  });
  report.define('openai.chat.stream.tokensPerSecond', {
    label: `one ${STREAM_TOKENS}-token chat completion through the SDK (stream): tokens/s (request → last content delta)`,
    unit: 'tokens/s',
    baselineKey: 'openai.stream.direct.tokensPerSecond',
  });
  report.define('openai.stream.direct.tokensPerSecond', { label: `the direct SDK (interleaved): one ${STREAM_TOKENS}-token stream, tokens/s`, unit: 'tokens/s' });
  const scenario = fillerTokens(STREAM_TOKENS);
  const viaSdk = async () => {
    const startedAt = now();
    let lastAt = startedAt;
    for await (const event of await openai.responses.create({ input: scriptedContent(scenario), stream: true })) {
      if (event.type === 'response.output_text.delta') lastAt = now();
    }
    return STREAM_TOKENS / ((lastAt - startedAt) / 1000);
  };
  const viaChat = async () => {
    const startedAt = now();
    let lastAt = startedAt;
    const messages = [{ role: 'user' as const, content: scriptedContent(scenario) }];
    for await (const chunk of await openai.chat.completions.create({ model: 'scripted', messages, stream: true })) {
      if (chunk.choices[0]?.delta?.content) lastAt = now();
    }
    return STREAM_TOKENS / ((lastAt - startedAt) / 1000);
  };
  const viaDirect = async () => {
    const timing = await streamDirect(direct, scenario);
    return STREAM_TOKENS / ((timing.lastTokenAt! - timing.startedAt) / 1000);
  };
  await viaSdk();
  await viaChat();
  await viaDirect();
  for (let repetition = 0; repetition < context.options.repetitions; repetition++) {
    const first = repetition % 2 === 0;
    if (first) report.sample('openai.stream.tokensPerSecond', await viaSdk());
    report.sample('openai.stream.direct.tokensPerSecond', await viaDirect());
    if (!first) report.sample('openai.stream.tokensPerSecond', await viaSdk());
    report.sample('openai.chat.stream.tokensPerSecond', await viaChat());
  }
}

async function batches(context: RunContext, report: ReportBuilder, stack: SwitchyardStack, openai: OpenAI): Promise<void> {
  report.define('openai.batch.itemsPerSecond', {
    label: `a ${BATCH_LINES}-line OpenAI batch: items/s (upload → output file ready)`,
    unit: 'items/s',
    baselineKey: 'openai.batch.native.itemsPerSecond',
    target: { goal: 'issue 26', on: 'ratio', op: '>=', value: 0.9 },
  });
  report.define('openai.batch.native.itemsPerSecond', { label: `the same ${BATCH_LINES} items submitted natively (interleaved): items/s (POST → batch-finish)`, unit: 'items/s' });
  const line = (i: number) => ({ model: 'scripted', messages: [{ role: 'user', content: scriptedContent(fillerTokens(BATCH_TOKENS), `item ${i}`) }] });
  const openAiFile = Array.from({ length: BATCH_LINES }, (_, i) => JSON.stringify({ custom_id: `i${i}`, method: 'POST', url: '/v1/chat/completions', body: line(i) })).join('\n');
  const nativeBody = Array.from({ length: BATCH_LINES }, (_, i) => JSON.stringify({ customId: `i${i}`, model: 'scripted', messages: [line(i).messages[0]!.content] })).join('\n');
  const native = async () => {
    const startedAt = now();
    const response = await fetch(`${stack.url}/v1/batches`, {
      method: 'POST',
      headers: { authorization: `Bearer ${stack.apiKey}`, 'content-type': 'application/x-ndjson' },
      body: nativeBody,
    });
    const { batchId } = (await response.json()) as { batchId: string };
    await waitForFinish(stack.url, stack.apiKey, batchId);
    return BATCH_LINES / ((now() - startedAt) / 1000);
  };
  const viaSdk = async () => {
    const startedAt = now();
    const file = await openai.files.create({ file: await toFile(Buffer.from(openAiFile), 'batch.jsonl'), purpose: 'batch' });
    const batch = await openai.batches.create({ input_file_id: file.id, endpoint: '/v1/chat/completions', completion_window: '24h' });
    await waitForFinish(stack.url, stack.apiKey, batch.id);
    const ended = await openai.batches.retrieve(batch.id);
    if (ended.request_counts?.completed !== BATCH_LINES || !ended.output_file_id) throw new Error(`the OpenAI batch ended with ${JSON.stringify(ended.request_counts)}`);
    return BATCH_LINES / ((now() - startedAt) / 1000);
  };
  const repetitions = Math.min(context.options.repetitions, 2);
  for (let repetition = 0; repetition < repetitions; repetition++) {
    const nativeFirst = repetition % 2 === 0;
    if (!nativeFirst) report.sample('openai.batch.itemsPerSecond', await viaSdk());
    report.sample('openai.batch.native.itemsPerSecond', await native());
    if (nativeFirst) report.sample('openai.batch.itemsPerSecond', await viaSdk());
  }
}

/**
 * Reads an SSE response to `end` (the turn's end: the next turn on its conversation must not find
 * it still running): when `marker` first came.
 */
async function readUntil(response: Response, marker: string, end: string): Promise<number> {
  const decoder = new TextDecoder();
  let text = '';
  let markedAt: number | undefined;
  for await (const chunk of response.body!) {
    text += decoder.decode(chunk as Uint8Array, { stream: true });
    if (markedAt === undefined && text.includes(marker)) markedAt = now();
    if (text.includes(end)) {
      await response.body!.cancel().catch(() => undefined);
      break;
    }
  }
  if (markedAt === undefined) throw new Error(`the stream ended without ${marker}`);
  return markedAt;
}
