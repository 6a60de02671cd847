import http from 'node:http';
import { ApiClient } from '../lib/api-client';
import type { Benchmark, ReportBuilder } from '../lib/benchmark';
import type { RunContext } from '../lib/run-context';
import { sleep } from '../lib/clock';
import { heapUsedBytes } from '../lib/metrics-page';
import { rssMiB } from '../lib/process-usage';
import { scriptedContent } from '../lib/scenario';
import { median } from '../lib/stats';
import { startSwitchyard, type SwitchyardStack } from '../lib/switchyard-stack';
import { curveRepetitions } from '../lib/workloads';

/** Readers of one finished turn that stop reading, per route. */
const PAUSED_READERS = 30;
/** Two steps of 50 text deltas of 20,000 tokens (some 120 KB each), Switchyard's calculator between them: about 13 MB of events. */
const STEP = { tokens: 1_000_000, chunkTokens: 20_000 };
const LARGE_TURN = { steps: [{ ...STEP, toolCalls: [{ name: 'calculator', arguments: { expression: '6*7' } }] }, STEP] };
/** Requests sent at once, each with a body just under MAX_BODY_BYTES (1 MiB). */
const LARGE_BODIES = 60;
const BODY_TEXT_CHARS = 1_000_000;

/**
 * What an API process holds for requests that stay open: (a) readers of the replay of a finished
 * 13 MB turn made of large events that stop reading, on `GET /v1/turns/:id/events` and on the
 * Responses stream, the growth of its RSS and V8 heap per reader (each should cost
 * about WS_MAX_BUFFERED_BYTES at most, 4 MiB by default, whatever the turn weighs); (b) 60
 * requests of 1 MiB bodies at once, on `POST /openai/v1/responses` (foreground: each stays open
 * for its turn) and on `POST /v1/conversations/:id/turns`, the peak RSS growth and how many were
 * refused past MAX_TURN_BODY_BYTES_IN_FLIGHT.
 */
export const heldMemory: Benchmark = {
  name: 'held-memory',
  title: 'Memory held by paused replay readers and by many large request bodies at once',
  kind: 'case',
  timeoutMs: 900_000,
  async run(context, report) {
    report.note(
      `an API process and two workers, default settings, a new stack for each measurement (memory a process has taken is not handed back); the API process is measured. (a) One turn of ${LARGE_TURN.steps.length} ` +
        `steps of ${STEP.tokens.toLocaleString('en-US')} tokens in deltas of ${STEP.chunkTokens.toLocaleString('en-US')}, made natively, or through ` +
        `POST /openai/v1/responses; then ${PAUSED_READERS} readers of each replay open it and stop reading at once (each on a connection of its own); ` +
        'RSS (/proc) and V8 heap in use (/metrics) are read before and 3 s after (the median of three readings 0.5 s apart); per reader = growth ÷ readers. ' +
        `(b) ${LARGE_BODIES} requests at once, each with ${BODY_TEXT_CHARS.toLocaleString('en-US')} characters of input and a 20-token answer, ` +
        'RSS read every 50 ms until all are answered; peak growth over the reading before, and the 503s (MAX_TURN_BODY_BYTES_IN_FLIGHT, Retry-After: retried by a client).',
    );
    for (const route of ['events', 'responses']) {
      report.define(`heldMemory.${route}.rssPerReader`, { label: `${ROUTE_LABEL[route]}: RSS growth per paused reader`, unit: 'MiB' });
      report.define(`heldMemory.${route}.heapPerReader`, { label: `${ROUTE_LABEL[route]}: V8 heap growth per paused reader`, unit: 'MiB' });
    }
    for (const route of ['responses', 'turns']) {
      report.define(`heldMemory.bodies.${route}.peakRss`, { label: `${LARGE_BODIES} bodies of 1 MiB at once on ${BODY_ROUTE_LABEL[route]}: peak RSS growth`, unit: 'MiB' });
      report.define(`heldMemory.bodies.${route}.refused`, { label: `${LARGE_BODIES} bodies of 1 MiB at once on ${BODY_ROUTE_LABEL[route]}: answered 503`, unit: 'requests' });
    }
    // A stack of its own for each measurement: memory a process has taken is not handed back,
    // so a reading after another part would start from that part's high-water mark.
    for (let repetition = 0; repetition < curveRepetitions(context.options); repetition++) {
      for (const route of ['events', 'responses'] as const) {
        await onFreshStack(context, `held-memory-${route}-${repetition + 1}`, (stack, api) => pausedReaders(report, stack, api, route));
      }
      for (const route of ['responses', 'turns'] as const) {
        await onFreshStack(context, `held-memory-bodies-${route}-${repetition + 1}`, (stack, api) => largeBodies(report, stack, api, route));
      }
    }
  },
};

async function onFreshStack(context: RunContext, name: string, measure: (stack: SwitchyardStack, api: ApiClient) => Promise<void>): Promise<void> {
  const stack = await startSwitchyard(context, { name, topology: 'api-and-workers' });
  const api = new ApiClient(stack.url, stack.apiKey);
  try {
    await measure(stack, api);
  } finally {
    api.close();
    await stack.stop();
  }
}

const ROUTE_LABEL: Record<string, string> = { events: 'GET /v1/turns/:id/events', responses: 'GET /openai/v1/responses/:id?stream=true' };
const BODY_ROUTE_LABEL: Record<string, string> = { responses: 'POST /openai/v1/responses', turns: 'POST /v1/conversations/:id/turns' };

async function pausedReaders(report: ReportBuilder, stack: SwitchyardStack, api: ApiClient, route: 'events' | 'responses'): Promise<void> {
  let path: string;
  if (route === 'events') {
    const conversationId = await api.createConversation('held-memory');
    const turnId = await api.postTurn(conversationId, scriptedContent(LARGE_TURN));
    await waitFor(async () => ['completed', 'failed'].includes((await api.request('GET', `/v1/turns/${turnId}`)).body.status), 'the large turn');
    path = `/v1/turns/${turnId}/events`;
  } else {
    const created = await api.request('POST', '/openai/v1/responses', { input: scriptedContent(LARGE_TURN), tools: [{ type: 'function', name: 'calculator' }] });
    if (created.body?.status !== 'completed') throw new Error(`the large response answered ${created.status}: ${JSON.stringify(created.body).slice(0, 300)}`);
    path = `/openai/v1/responses/${created.body.id}?stream=true`;
  }
  const before = await footprint(stack);
  const readers = await Promise.all(Array.from({ length: PAUSED_READERS }, () => pausedGet(stack, path)));
  await sleep(2000);
  const after = await footprint(stack);
  report.sample(`heldMemory.${route}.rssPerReader`, (after.rssMiB - before.rssMiB) / PAUSED_READERS);
  report.sample(`heldMemory.${route}.heapPerReader`, (after.heapMiB - before.heapMiB) / PAUSED_READERS);
  for (const reader of readers) reader.destroy();
}

async function largeBodies(report: ReportBuilder, stack: SwitchyardStack, api: ApiClient, route: 'responses' | 'turns'): Promise<void> {
  // Two texts of half the input each: one text may hold 500,000 characters.
  const half = 'x'.repeat(BODY_TEXT_CHARS / 2 - 1000);
  const texts = [half, scriptedContent({ tokens: 20 }, half)];
  const conversations = route === 'turns' ? await Promise.all(Array.from({ length: LARGE_BODIES }, () => api.createConversation('held-memory bodies'))) : [];
  const send = (index: number) =>
    route === 'responses'
      ? post(stack, '/openai/v1/responses', { input: [{ role: 'user', content: texts.map((text) => ({ type: 'input_text', text })) }] })
      : post(stack, `/v1/conversations/${conversations[index]}/turns`, { content: texts.map((text) => ({ type: 'text', text })) });
  const pid = apiPid(stack);
  const before = (await footprint(stack)).rssMiB;
  let peak = before;
  let sending = true;
  const sampling = (async () => {
    while (sending) {
      peak = Math.max(peak, rssMiB(pid));
      await sleep(50);
    }
  })();
  const answers = await Promise.all(Array.from({ length: LARGE_BODIES }, (_, index) => send(index)));
  sending = false;
  await sampling;
  const unexpected = answers.find((answer) => ![200, 202, 503].includes(answer.status));
  if (unexpected) throw new Error(`${BODY_ROUTE_LABEL[route]} answered ${unexpected.status}: ${unexpected.text.slice(0, 300)}`);
  report.sample(`heldMemory.bodies.${route}.peakRss`, peak - before);
  report.sample(`heldMemory.bodies.${route}.refused`, answers.filter((answer) => answer.status === 503).length);
}

/** A GET on a connection of its own whose reader stops reading at once. */
function pausedGet(stack: SwitchyardStack, path: string): Promise<http.IncomingMessage> {
  return new Promise((resolve, reject) => {
    const request = http.get(`${stack.url}${path}`, { agent: false, headers: { authorization: `Bearer ${stack.apiKey}` } }, (response) => {
      response.pause();
      if (response.statusCode === 200) return resolve(response);
      response.destroy();
      reject(new Error(`GET ${path} answered ${response.statusCode}`));
    });
    request.on('error', reject);
  });
}

/** A POST on a connection of its own; its status once answered whole. */
function post(stack: SwitchyardStack, path: string, body: unknown): Promise<{ status: number; text: string }> {
  const payload = JSON.stringify(body);
  return new Promise((resolve, reject) => {
    const headers = { authorization: `Bearer ${stack.apiKey}`, 'content-type': 'application/json', 'content-length': Buffer.byteLength(payload) };
    const request = http.request(`${stack.url}${path}`, { method: 'POST', agent: false, headers }, (response) => {
      let text = '';
      response.setEncoding('utf8');
      response.on('data', (piece: string) => (text += piece));
      response.once('end', () => resolve({ status: response.statusCode ?? 0, text }));
    });
    request.on('error', reject);
    request.end(payload);
  });
}

function apiPid(stack: SwitchyardStack): number {
  return stack.services.find((service) => service.role === 'api')!.process.pid;
}

/** RSS and V8 heap in use of the API process: the median of three readings, a second after now. */
async function footprint(stack: SwitchyardStack): Promise<{ rssMiB: number; heapMiB: number }> {
  const pid = apiPid(stack);
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

async function waitFor(check: () => Promise<boolean>, what: string, timeoutMs = 120_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`${what} did not end within ${timeoutMs / 1000} s`);
    await sleep(200);
  }
}
