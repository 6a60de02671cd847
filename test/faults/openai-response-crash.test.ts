import OpenAI from 'openai';
import { accumulateResponse } from 'openai/lib/responses/ResponseAccumulator';
import { faultProcesses } from '../support/fault-processes';
import { checkInvariants } from '../support/invariants';
import { openAiClient } from '../support/openai-sdk';
import { markedScripted } from '../support/scripted';
import { startTestStack, type TestStack } from '../support/stack';

type StreamEvent = OpenAI.Responses.ResponseStreamEvent;

/**
 * docs/RELIABILITY.md case 41: a Responses API stream resumed with `starting_after` after the
 * worker that ran it was SIGKILLed mid-stream. Short locks (2 s, stall checks every 500 ms) so
 * that the dead worker's job is taken back within seconds.
 */
describe('a background response whose worker dies mid-stream', () => {
  let stack: TestStack;
  let client: OpenAI;
  const processes = faultProcesses(() => stack);

  beforeAll(async () => {
    stack = await startTestStack({ workers: 0, env: { LOCK_DURATION_MS: '2000', STALLED_INTERVAL_MS: '500' } });
    client = openAiClient(stack.url, (await stack.createUser('resume-after-crash')).apiKey);
  });
  afterEach(() => processes.stopAll());
  afterAll(() => stack.close());

  it('resumes with starting_after into a valid stream: nothing lost or repeated, the dead attempt taken back, the answer once', async () => {
    const victim = await processes.spawn('worker');
    const answer = 'The second attempt answers this, once.';
    // The first attempt stalls after 20 tokens, so it is still running when its worker is killed however slow the machine.
    const background = await client.responses.create({
      input: markedScripted({ attempts: [{ tokens: 400, tokenDelayMs: 10, stallAfterTokens: 20 }, { text: answer }] }),
      background: true,
    });

    // Read until the dying attempt has streamed, then drop the connection as a client losing its network would.
    const seen: StreamEvent[] = [];
    const first = await client.responses.retrieve(background.id, { stream: true });
    // Deltas may arrive merged: five tokens of text, however many events carried them.
    let text = '';
    for await (const event of first) {
      seen.push(event);
      if (event.type === 'response.output_text.delta') text += event.delta;
      if (text.split(/\s+/).filter(Boolean).length >= 5) break;
    }
    const lastSeen = seen.at(-1)!.sequence_number;

    await processes.addWorker();
    await victim.kill('SIGKILL');
    const resumed: StreamEvent[] = [];
    for await (const event of await client.responses.retrieve(background.id, { stream: true, starting_after: lastSeen })) resumed.push(event);

    const all = [...seen, ...resumed];
    // Numbered 0, 1, 2, … across the two connections: nothing lost, nothing sent twice.
    expect(all.map((event) => event.sequence_number)).toEqual(all.map((_, index) => index));
    const terminal = all.at(-1) as OpenAI.Responses.ResponseCompletedEvent;
    expect(terminal.type).toBe('response.completed');
    expect(all.filter((event) => event.type.startsWith('response.completed') || event.type === 'response.failed')).toHaveLength(1);

    // The dead attempt's message is done again, incomplete and empty; the new attempt's text is an item of its own.
    const discarded = resumed.find((event) => event.type === 'response.output_item.done' && event.item.type === 'message' && event.item.status === 'incomplete');
    expect(discarded).toBeDefined();
    // What the SDK's accumulator holds before the end (it throws on an event that does not fit) is the answer, once.
    let snapshot: OpenAI.Responses.Response | undefined;
    for (const event of all.slice(0, -1)) snapshot = accumulateResponse(event, snapshot);
    expect(snapshot!.output_text).toBe(answer);
    expect(terminal.response.output_text).toBe(answer);
    expect(terminal.response.output).toEqual([expect.objectContaining({ type: 'message', status: 'completed' })]);
    const stored = await client.responses.retrieve(background.id);
    expect(stored).toMatchObject({ status: 'completed', output_text: answer });

    // The same resume through the SDK's helper, from the same place.
    const helper = await client.responses.stream({ response_id: background.id, starting_after: lastSeen }).finalResponse();
    expect(helper.output_text).toBe(answer);

    const { rows } = await stack.resources.db.query<{ turn_id: string }>('SELECT turn_id FROM openai_responses WHERE id = $1', [background.id]);
    expect(await checkInvariants(stack.resources.db, { turnIds: [rows[0]!.turn_id], toolExecutions: [] })).toEqual({ [rows[0]!.turn_id]: 'completed' });
  }, 60_000);

  it("opens the restarted step's message and call under new item ids: every item id of the stream is unique", async () => {
    const victim = await processes.spawn('worker');
    const tools: OpenAI.Responses.Tool[] = [{ type: 'function', name: 'lookup', parameters: { type: 'object', properties: { q: { type: 'string' } } }, strict: false }];
    // The dying attempt streams its text, then its call's arguments a character at a time; the
    // provider names the second attempt's call `call_0` again, as it named the first one's.
    const slowCall = { text: 'Looking it up.', toolCalls: [{ name: 'lookup', arguments: { q: 'x'.repeat(500) } }], argumentChunkChars: 1, tokenDelayMs: 10 };
    const answer = { text: 'Looking it up.', toolCalls: [{ name: 'lookup', arguments: { q: 'oslo' } }] };
    const background = await client.responses.create({ input: markedScripted({ attempts: [slowCall, answer] }), tools, background: true });

    // One connection throughout: the worker dies under it, and the stream goes on from the log.
    const all: StreamEvent[] = [];
    let killed = false;
    for await (const event of await client.responses.retrieve(background.id, { stream: true })) {
      all.push(event);
      if (!killed && all.filter((each) => each.type === 'response.function_call_arguments.delta').length === 3) {
        killed = true;
        await processes.addWorker();
        await victim.kill('SIGKILL');
      }
    }
    expect(killed).toBe(true);
    expect(all.map((event) => event.sequence_number)).toEqual(all.map((_, index) => index));
    expect(all.at(-1)!.type).toBe('response.completed');

    const added = all.flatMap((event) => (event.type === 'response.output_item.added' ? [event.item] : []));
    const ids = added.map((item) => item.id);
    expect(added.map((item) => item.type)).toEqual(['message', 'function_call', 'message', 'function_call']);
    expect(new Set(ids).size).toBe(ids.length);
    // The dead attempt's items are done again, incomplete, under their own ids.
    const done = all.flatMap((event) => (event.type === 'response.output_item.done' ? [event.item as { id: string; status: string }] : []));
    expect(done.filter((item) => item.status === 'incomplete').map((item) => item.id)).toEqual(ids.slice(0, 2));
    // Each delta names the item it belongs to: the new attempt's text and arguments go to the new items.
    const textItems = new Set(all.flatMap((event) => (event.type === 'response.output_text.delta' ? [event.item_id] : [])));
    expect([...textItems]).toEqual(expect.arrayContaining([ids[2]]));
    const lastArguments = all.filter((event): event is OpenAI.Responses.ResponseFunctionCallArgumentsDoneEvent => event.type === 'response.function_call_arguments.done').at(-1)!;
    expect(lastArguments).toMatchObject({ item_id: ids[3], arguments: JSON.stringify({ q: 'oslo' }) });

    // The SDK's accumulator applies every event; the response ends with the caller's call, once.
    let snapshot: OpenAI.Responses.Response | undefined;
    for (const event of all.slice(0, -1)) snapshot = accumulateResponse(event, snapshot);
    expect(snapshot!.output_text).toBe('Looking it up.');
    const stored = await client.responses.retrieve(background.id);
    expect(stored.status).toBe('completed');
    expect(stored.output).toEqual([
      expect.objectContaining({ type: 'message', status: 'completed' }),
      expect.objectContaining({ type: 'function_call', name: 'lookup', call_id: 'call_0', arguments: JSON.stringify({ q: 'oslo' }) }),
    ]);
  }, 60_000);
});
