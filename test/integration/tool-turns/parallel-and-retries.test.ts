import { httpToolEntry, startToolHttpServer, type RecordedRequest, type ToolHttpServer } from '../../support/tool-servers';
import { eventsOfType, startToolTurnHarness, type ToolTurnHarness } from '../../support/tool-turns';

/**
 * Server-run tool calls as BullMQ jobs: the calls of one step run at once, each retries on its
 * own with backoff, and the follow-up completion gets one result per call, in the model's order.
 */
describe('parallel tool jobs with retries', () => {
  let server: ToolHttpServer;
  let harness: ToolTurnHarness;
  let flakyRequests = 0;
  /** The calls to /held, each answered when the test calls its `answer`. */
  const held: { request: RecordedRequest; answer: () => void }[] = [];
  let threeHeldAtOnce = () => {};

  beforeAll(async () => {
    server = await startToolHttpServer();
    server.route('/held', (request) => {
      let answer!: () => void;
      const answered = new Promise<void>((resolve) => (answer = resolve));
      held.push({ request, answer });
      if (held.filter((each) => !each.request.abortedAt).length === 3) threeHeldAtOnce();
      return { until: answered, body: { echoed: request.body } };
    });
    server.route('/flaky', () => (++flakyRequests <= 2 ? { status: 503, body: 'busy, try again' } : { body: { created: 'ticket-1' } }));
    server.route('/broken', { status: 500, body: 'always broken' });
    server.route('/hang', { hang: true });
    server.route('/stuck', { hang: true });
    server.route('/echo', (request) => ({ body: { echoed: request.body } }));
    const tool = (name: string, settings: { timeoutMs: number; retries: number }) => httpToolEntry(server.url, name, settings);
    harness = await startToolTurnHarness({
      toolFiles: {
        'tools.json': {
          tools: [
            tool('held', { timeoutMs: 30_000, retries: 0 }),
            tool('flaky', { timeoutMs: 800, retries: 2 }),
            tool('broken', { timeoutMs: 800, retries: 1 }),
            tool('hang', { timeoutMs: 300, retries: 0 }),
            tool('stuck', { timeoutMs: 10_000, retries: 2 }),
            tool('echo', { timeoutMs: 2_000, retries: 0 }),
          ],
        },
      },
    });
  });
  afterAll(async () => {
    await harness.close();
    await server.close();
  });

  it('runs the calls of one step at the same time and answers the model with one tool message per call, in its order', async () => {
    const calls = [1, 2, 3].map((n) => ({ name: 'held', arguments: { n } }));
    const conversationId = await harness.newConversation();
    const client = await harness.subscribe(conversationId);
    const allStarted = new Promise<void>((resolve) => (threeHeldAtOnce = resolve));
    const { turnId, marker } = await harness.postTurn(conversationId, { steps: [{ toolCalls: calls, interleave: true }, { text: 'done' }] });
    // Every call has started while none has finished: the three run at once, not one by one
    // (one by one, the first would be held until its timeout, and never three at once).
    await allStarted;
    expect(held.map(({ request }) => (request.body as { n: number }).n).sort()).toEqual([1, 2, 3]);

    // They finish in the reverse of the model's order: each once the one before has its result.
    const results = () => client.events().filter((event) => event.turnId === turnId && event.type === 'tool-result').length;
    for (const n of [3, 2, 1]) {
      held.find(({ request }) => (request.body as { n: number }).n === n)!.answer();
      await client.waitFor(() => results() === 4 - n);
    }
    const events = (await client.waitForTurnEnd(turnId)).filter((event) => event.turnId === turnId);
    expect(events.at(-1)).toMatchObject({ type: 'turn-finish', finishReason: 'stop' });
    const ids = eventsOfType(events, 'tool-call-end').map((event) => event.toolCallId);
    expect(eventsOfType(events, 'tool-result').map((event) => event.toolCallId)).toEqual([...ids].reverse());

    const [first, followUp] = harness.providerRequests(marker);
    expect(harness.providerRequests(marker)).toHaveLength(2);
    expect(first.messages.at(-1).role).toBe('user');
    const assistant = followUp.messages.at(-4);
    expect(assistant.role).toBe('assistant');
    expect(assistant.tool_calls).toEqual(calls.map((call, index) => ({ id: ids[index], type: 'function', function: { name: 'held', arguments: JSON.stringify(call.arguments) } })));
    // In the assistant's order, not in the order the calls finished.
    const toolMessages = followUp.messages.slice(-3);
    expect(toolMessages.map((message: any) => message.role)).toEqual(['tool', 'tool', 'tool']);
    expect(toolMessages.map((message: any) => message.tool_call_id)).toEqual(assistant.tool_calls.map((call: any) => call.id));
    expect(toolMessages.map((message: any) => JSON.parse(message.content))).toEqual([1, 2, 3].map((n) => ({ echoed: { n } })));
  });

  it('retries a failing call with the same Idempotency-Key and uses its result once', async () => {
    const run = await harness.runTurn({ steps: [{ toolCalls: [{ name: 'flaky', arguments: { n: 7 } }] }, { text: 'created' }] });
    expect(run.events.at(-1).type).toBe('turn-finish');
    const [call] = eventsOfType(run.events, 'tool-call-end');

    const requests = server.requests.filter((request) => request.path === '/flaky');
    expect(requests).toHaveLength(3);
    expect(requests.map((request) => request.headers['idempotency-key'])).toEqual(Array(3).fill(`${run.turnId}:${call.toolCallId}`));
    // Backoff: the retries wait, they do not hammer the failing service.
    expect(requests[1]!.receivedAt - requests[0]!.answeredAt!).toBeGreaterThanOrEqual(300);

    const results = eventsOfType(run.events, 'tool-result');
    expect(results).toEqual([expect.objectContaining({ toolCallId: call.toolCallId, result: { created: 'ticket-1' }, attempts: 3 })]);
    expect(results[0]).not.toHaveProperty('error');

    const followUp = harness.providerRequests(run.marker)[1];
    const toolMessages = followUp.messages.filter((message: any) => message.role === 'tool');
    expect(toolMessages).toEqual([{ role: 'tool', tool_call_id: call.toolCallId, content: JSON.stringify({ created: 'ticket-1' }) }]);

    const turn = await harness.api.get(`/v1/turns/${run.turnId}`);
    expect(turn.body.toolCalls).toEqual([
      expect.objectContaining({ toolCallId: call.toolCallId, status: 'succeeded', attempts: 3, args: { n: 7 }, result: { created: 'ticket-1' } }),
    ]);
  });

  it('gives a call that always fails and one that times out error results, and the turn still completes', async () => {
    const run = await harness.runTurn({
      steps: [
        {
          toolCalls: [
            { name: 'broken', arguments: {} },
            { name: 'hang', arguments: {} },
          ],
        },
        { text: 'both failed' },
      ],
    });
    expect(run.events.at(-1)).toMatchObject({ type: 'turn-finish', finishReason: 'stop' });
    const [broken, hang] = eventsOfType(run.events, 'tool-call-end').map((event) => event.toolCallId);
    const results = new Map(eventsOfType(run.events, 'tool-result').map((event) => [event.toolCallId, event]));
    expect(results.get(broken)).toMatchObject({ error: { code: 'http_error', status: 500, message: 'always broken' }, attempts: 2 });
    expect(results.get(hang)).toMatchObject({ error: { code: 'timeout', message: 'no result within 300 ms' }, attempts: 1 });
    expect(results.get(broken)).not.toHaveProperty('result');
    expect(eventsOfType(run.events, 'tool_processing_complete')).toEqual([expect.objectContaining({ results: 2, failed: 2 })]);
    expect(server.requests.filter((request) => request.path === '/broken')).toHaveLength(2);

    // The model reads both failures as the calls' results.
    const followUp = harness.providerRequests(run.marker)[1];
    const contents = followUp.messages.filter((message: any) => message.role === 'tool').map((message: any) => JSON.parse(message.content));
    expect(contents).toEqual([{ error: { code: 'http_error', message: 'always broken' } }, { error: { code: 'timeout', message: 'no result within 300 ms' } }]);
    const turn = await harness.api.get(`/v1/turns/${run.turnId}`);
    expect(turn.body.status).toBe('completed');
    expect(turn.body.toolCalls.map((call: any) => [call.status, call.attempts, call.error.code])).toEqual([
      ['failed', 2, 'http_error'],
      ['failed', 1, 'timeout'],
    ]);
  });

  it('fans out five calls of which one fails for good: the step goes on and the model reads four results and one error', async () => {
    const before = server.requests.filter((request) => request.path === '/broken').length;
    const calls = [
      { name: 'echo', arguments: { n: 1 } },
      { name: 'echo', arguments: { n: 2 } },
      { name: 'broken', arguments: { n: 3 } },
      { name: 'echo', arguments: { n: 4 } },
      { name: 'echo', arguments: { n: 5 } },
    ];
    const run = await harness.runTurn({ steps: [{ toolCalls: calls }, { text: 'four of five' }] });
    expect(run.events.at(-1)).toMatchObject({ type: 'turn-finish', finishReason: 'stop' });
    const ids = eventsOfType(run.events, 'tool-call-end').map((event) => event.toolCallId);
    expect(ids).toHaveLength(5);
    const results = new Map(eventsOfType(run.events, 'tool-result').map((event) => [event.toolCallId, event]));
    expect(results.size).toBe(5);
    expect(results.get(ids[2])).toMatchObject({ error: { code: 'http_error', status: 500, message: 'always broken' }, attempts: 2 });
    expect(results.get(ids[2])).not.toHaveProperty('result');
    for (const index of [0, 1, 3, 4]) {
      expect(results.get(ids[index])).toMatchObject({ result: { echoed: calls[index]!.arguments }, attempts: 1 });
      expect(results.get(ids[index])).not.toHaveProperty('error');
    }
    expect(eventsOfType(run.events, 'tool_processing_complete')).toEqual([expect.objectContaining({ results: 5, failed: 1 })]);
    // Its retries were used up: one attempt and one retry.
    expect(server.requests.filter((request) => request.path === '/broken').length - before).toBe(2);

    // The step went on: the model's next request has all five tool messages, in its order.
    const requests = harness.providerRequests(run.marker);
    expect(requests).toHaveLength(2);
    const toolMessages = requests[1].messages.filter((message: any) => message.role === 'tool');
    expect(toolMessages.map((message: any) => message.tool_call_id)).toEqual(ids);
    expect(toolMessages.map((message: any) => JSON.parse(message.content))).toEqual([
      { echoed: { n: 1 } },
      { echoed: { n: 2 } },
      { error: { code: 'http_error', message: 'always broken' } },
      { echoed: { n: 4 } },
      { echoed: { n: 5 } },
    ]);
    const turn = await harness.api.get(`/v1/turns/${run.turnId}`);
    expect(turn.body.status).toBe('completed');
    expect(turn.body.toolCalls.map((call: any) => [call.status, call.attempts])).toEqual([
      ['succeeded', 1],
      ['succeeded', 1],
      ['failed', 2],
      ['succeeded', 1],
      ['succeeded', 1],
    ]);
  });

  it('stops the running tool calls of a cancelled turn', async () => {
    const conversationId = await harness.newConversation();
    const client = await harness.subscribe(conversationId);
    const before = server.requests.length;
    const { turnId } = await harness.postTurn(conversationId, { steps: [{ toolCalls: [{ name: 'stuck', arguments: {} }] }, { text: 'never' }] });
    const request = (await server.waitForRequests(before + 1))[before]!;
    expect(request.path).toBe('/stuck');

    const cancelled = await harness.api.post(`/v1/turns/${turnId}/cancel`);
    expect(cancelled.body.status).toBe('cancelled');
    // Long before the tool's 10 s timeout: the request is aborted, not waited out.
    await server.waitForAbort(request, 3_000);
    const events = await client.waitForTurnEnd(turnId);
    expect(events.at(-1).type).toBe('turn-cancelled');
    expect(eventsOfType(events, 'tool-result')).toEqual([]);
    const turn = await harness.api.get(`/v1/turns/${turnId}`);
    expect(turn.body.toolCalls).toEqual([expect.objectContaining({ status: 'cancelled', attempts: 1 })]);
    // Nor is it tried again.
    expect(server.requests.filter((each) => each.path === '/stuck')).toHaveLength(1);
  });
});

describe('tool jobs of a stopping worker', () => {
  let server: ToolHttpServer;
  let harness: ToolTurnHarness;

  beforeAll(async () => {
    server = await startToolHttpServer();
    harness = await startToolTurnHarness({
      env: { SHUTDOWN_GRACE_MS: '200' },
      toolFiles: { 'slow.json': { name: 'slow', description: 'Slow', url: `${server.url}/slow`, timeoutMs: 10_000, retries: 0 } },
    });
  });
  afterAll(async () => {
    await harness.close();
    await server.close();
  });

  it('hands a running call back to run again elsewhere with the same Idempotency-Key, rather than failing it', async () => {
    // The first request is held until its worker stops; the second (elsewhere) is answered.
    server.route('/slow', () => (server.requests.length === 1 ? { hang: true } : { body: { done: true } }));
    const conversationId = await harness.newConversation();
    const client = await harness.subscribe(conversationId);
    const { turnId } = await harness.postTurn(conversationId, { steps: [{ toolCalls: [{ name: 'slow', arguments: {} }] }, { text: 'done' }] });
    const [first] = await server.waitForRequests(1);

    const [stopping] = harness.stack.workers;
    await harness.stack.addWorker();
    await harness.stack.stopWorker(stopping!);
    await server.waitForAbort(first!, 2_000);

    const events = await client.waitForTurnEnd(turnId);
    expect(events.at(-1)).toMatchObject({ type: 'turn-finish', finishReason: 'stop' });
    const [call] = eventsOfType(events, 'tool-call-end');
    expect(eventsOfType(events, 'tool-result')).toEqual([expect.objectContaining({ toolCallId: call.toolCallId, result: { done: true } })]);
    expect(server.requests.map((request) => request.headers['idempotency-key'])).toEqual([`${turnId}:${call.toolCallId}`, `${turnId}:${call.toolCallId}`]);
  });
});
