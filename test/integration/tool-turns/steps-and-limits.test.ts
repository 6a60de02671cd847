import { startToolHttpServer, type ToolHttpServer } from '../../support/tool-servers';
import { eventsOfType, startToolTurnHarness, type ToolTurnHarness } from '../../support/tool-turns';

/** Turns of several completions: each tool round is followed by another step, up to `maxSteps`. */
describe('multi-step tool turns', () => {
  let server: ToolHttpServer;
  let harness: ToolTurnHarness;

  beforeAll(async () => {
    server = await startToolHttpServer();
    server.route('/lookup', (request) => ({ body: { found: request.body } }));
    harness = await startToolTurnHarness({
      toolFiles: {
        'lookup.json': {
          name: 'lookup',
          description: 'Looks a key up',
          url: `${server.url}/lookup`,
          timeoutMs: 800,
          retries: 0,
          fields: [{ name: 'key', required: true }],
        },
      },
    });
  });
  afterAll(async () => {
    await harness.close();
    await server.close();
  });

  const toolsMessagesAnswerEveryCall = (messages: any[]) => {
    for (const [index, message] of messages.entries()) {
      if (message.role !== 'assistant' || !message.toolCalls) continue;
      const answers = messages.slice(index + 1, index + 1 + message.toolCalls.length);
      expect(answers.map((answer: any) => [answer.role, answer.toolCallId])).toEqual(message.toolCalls.map((call: any) => ['tool', call.id]));
    }
  };

  it('runs tool → tool → text to turn-finish, each round on its own step', async () => {
    const run = await harness.runTurn({
      steps: [
        { toolCalls: [{ name: 'lookup', arguments: { key: 'first' } }] },
        {
          toolCalls: [
            { name: 'lookup', arguments: { key: 'second' } },
            { name: 'lookup', arguments: { key: 'third' } },
          ],
        },
        { text: 'all found' },
      ],
    });
    expect(run.events.at(-1)).toMatchObject({ type: 'turn-finish', finishReason: 'stop' });
    expect(eventsOfType(run.events, 'step-finish').map((event) => [event.step, event.finishReason])).toEqual([
      [1, 'tool_calls'],
      [2, 'tool_calls'],
      [3, 'stop'],
    ]);
    // Every call ran once, with its own arguments, although the model reused the ids of step 1 in step 2.
    // (The two calls of step 2 run at once, in either order.)
    expect(server.requests.map((request) => (request.body as { key: string }).key).sort()).toEqual(['first', 'second', 'third']);
    const keys = server.requests.map((request) => request.headers['idempotency-key']);
    expect(new Set(keys).size).toBe(3);

    const ids = eventsOfType(run.events, 'tool-call-end').map((event) => event.toolCallId);
    expect(new Set(ids).size).toBe(3);
    const results = new Map(eventsOfType(run.events, 'tool-result').map((event) => [event.toolCallId, event.result]));
    expect(ids.map((id) => results.get(id))).toEqual([{ found: { key: 'first' } }, { found: { key: 'second' } }, { found: { key: 'third' } }]);

    const requests = harness.providerRequests(run.marker);
    expect(requests).toHaveLength(3);
    expect(requests[2].messages.slice(-6).map((message: any) => message.role)).toEqual(['user', 'assistant', 'tool', 'assistant', 'tool', 'tool']);
    const conversation = await harness.api.get(`/v1/conversations/${run.conversationId}`);
    expect(conversation.body.messages.map((message: any) => message.role)).toEqual(['user', 'assistant', 'tool', 'assistant', 'tool', 'tool', 'assistant']);
    toolsMessagesAnswerEveryCall(conversation.body.messages);
    const turn = await harness.api.get(`/v1/turns/${run.turnId}`);
    expect(turn.body).toMatchObject({ status: 'completed', step: 3 });
    expect(turn.body.toolCalls.map((call: any) => [call.step, call.args.key, call.status])).toEqual([
      [1, 'first', 'succeeded'],
      [2, 'second', 'succeeded'],
      [2, 'third', 'succeeded'],
    ]);
  });

  it('gives a call its own id when the model reuses the id of a call refused in an earlier step of the same run', async () => {
    // Step 1's only call is refused before running (no `key`), so the run goes on to step 2 at once.
    const run = await harness.runTurn({
      steps: [{ toolCalls: [{ name: 'lookup', arguments: {} }] }, { toolCalls: [{ name: 'lookup', arguments: { key: 'second' } }] }, { text: 'found' }],
    });
    expect(run.events.at(-1)).toMatchObject({ type: 'turn-finish', finishReason: 'stop' });
    const ids = eventsOfType(run.events, 'tool-call-end').map((event) => event.toolCallId);
    expect(new Set(ids).size).toBe(2);
    expect(eventsOfType(run.events, 'tool-result').map((event) => [event.toolCallId, event.result ?? event.error.code])).toEqual([
      [ids[0], 'invalid_arguments'],
      [ids[1], { found: { key: 'second' } }],
    ]);
    const turn = await harness.api.get(`/v1/turns/${run.turnId}`);
    expect(turn.body.toolCalls.map((call: any) => [call.step, call.status])).toEqual([
      [1, 'failed'],
      [2, 'succeeded'],
    ]);
  });

  it('retries a follow-up completion the provider refuses, without running the tools again', async () => {
    const before = server.requests.length;
    const run = await harness.runTurn({
      steps: [{ toolCalls: [{ name: 'lookup', arguments: { key: 'once' } }] }, { attempts: [{ error: { status: 503, message: 'overloaded' } }, { text: 'found it' }] }],
    });
    expect(run.events.at(-1)).toMatchObject({ type: 'turn-finish', finishReason: 'stop' });
    expect(eventsOfType(run.events, 'provider-retry')).toHaveLength(1);
    expect(server.requests.length - before).toBe(1);
    const requests = harness.providerRequests(run.marker);
    expect(requests).toHaveLength(3);
    // The retried follow-up carries the same history as the refused one.
    expect(requests[2].messages).toEqual(requests[1].messages);
    const conversation = await harness.api.get(`/v1/conversations/${run.conversationId}`);
    expect(conversation.body.messages.map((message: any) => message.role)).toEqual(['user', 'assistant', 'tool', 'assistant']);
  });

  it('stops a model that calls tools forever at maxSteps, leaving a history the provider accepts', async () => {
    const forever = { steps: Array.from({ length: 10 }, (_, i) => ({ toolCalls: [{ name: 'lookup', arguments: { key: `round-${i}` } }] })) };
    const before = server.requests.length;
    const run = await harness.runTurn(forever, { body: { maxSteps: 3 } });
    expect(run.events.at(-1)).toMatchObject({ type: 'turn-finish', finishReason: 'max_steps' });
    expect(eventsOfType(run.events, 'step-start').map((event) => event.step)).toEqual([1, 2, 3]);
    expect(harness.providerRequests(run.marker)).toHaveLength(3);
    // The calls of the last step are never run: the turn is over.
    expect(server.requests.slice(before).map((request) => (request.body as { key: string }).key)).toEqual(['round-0', 'round-1']);
    const turn = await harness.api.get(`/v1/turns/${run.turnId}`);
    expect(turn.body).toMatchObject({ status: 'completed', finishReason: 'max_steps', step: 3 });
    expect(turn.body.toolCalls.map((call: any) => call.status)).toEqual(['succeeded', 'succeeded', 'cancelled']);

    const conversation = await harness.api.get(`/v1/conversations/${run.conversationId}`);
    toolsMessagesAnswerEveryCall(conversation.body.messages);
    // The scripted model checks the history as OpenAI does: a call without its tool message is
    // a 400. The next turn's call has the id `call_0` again, which is its own to use.
    const next = await harness.runTurn({ steps: [{ toolCalls: [{ name: 'lookup', arguments: { key: 'next turn' } }] }, { text: 'fine' }] }, { conversationId: run.conversationId });
    expect(next.events.at(-1)).toMatchObject({ type: 'turn-finish', finishReason: 'stop' });
    expect(eventsOfType(next.events, 'tool-result')).toEqual([expect.objectContaining({ toolCallId: 'call_0', result: { found: { key: 'next turn' } } })]);
    expect(server.requests.at(-1)!.headers['idempotency-key']).toBe(`${next.turnId}:call_0`);
  });

  it('stops a model that makes invalid calls at every step at maxSteps, running none of them', async () => {
    const bad = [
      { name: 'lookup', arguments: '{"key": "unterminated' },
      { name: 'no_such_tool', arguments: {} },
    ];
    const before = server.requests.length;
    const run = await harness.runTurn({ steps: Array.from({ length: 10 }, () => ({ toolCalls: bad })) }, { body: { maxSteps: 3 } });
    expect(run.events.at(-1)).toMatchObject({ type: 'turn-finish', finishReason: 'max_steps' });
    expect(eventsOfType(run.events, 'step-start').map((event) => event.step)).toEqual([1, 2, 3]);
    expect(harness.providerRequests(run.marker)).toHaveLength(3);
    // Each step's calls were answered with invalid_arguments (the last step's are never answered: the turn is over).
    expect(eventsOfType(run.events, 'tool-result').map((event) => [event.error.code, event.attempts])).toEqual(Array(4).fill(['invalid_arguments', 0]));
    for (const end of eventsOfType(run.events, 'tool-call-end')) expect(end).toMatchObject({ args: null, error: { code: 'invalid_arguments' } });
    expect(server.requests.length).toBe(before);
    const [, second, third] = harness.providerRequests(run.marker);
    for (const request of [second, third]) {
      const errors = request.messages.filter((message: any) => message.role === 'tool').map((message: any) => JSON.parse(message.content).error.code);
      expect(errors).toEqual(Array(request === second ? 2 : 4).fill('invalid_arguments'));
    }
    const turn = await harness.api.get(`/v1/turns/${run.turnId}`);
    expect(turn.body).toMatchObject({ status: 'completed', finishReason: 'max_steps', step: 3 });
    // The last step's calls are refused too, never run.
    expect(turn.body.toolCalls.map((call: any) => [call.step, call.status, call.attempts, call.error?.code])).toEqual(
      [1, 1, 2, 2, 3, 3].map((step) => [step, 'failed', 0, 'invalid_arguments']),
    );
  });
});
