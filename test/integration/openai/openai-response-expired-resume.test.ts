import OpenAI from 'openai';
import { OpenAiResponsesRepository } from '../../../src/openai/store/openai-responses-repository';
import { openAiClient } from '../../support/openai-sdk';
import { scripted } from '../../support/scripted';
import { startTestStack, type TestStack } from '../../support/stack';
import { collect } from '../../support/collect';

type StreamEvent = OpenAI.Responses.ResponseStreamEvent;

/**
 * A streamed retrieve of a response whose turn's events the log no longer keeps whole
 * (docs/API.md, "OpenAI-compatible routes"): it sends the opening events and the end carrying
 * the stored response, numbered after the reader's `starting_after`, rather than renumbering
 * what is left and skipping or losing the end.
 */
describe('OpenAI-compatible responses: resuming a stream the event log no longer holds whole', () => {
  let stack: TestStack;
  let client: OpenAI;
  let userId: string;

  beforeAll(async () => {
    stack = await startTestStack({ workers: 1 });
    const user = await stack.createUser('responses-expired');
    userId = user.id;
    client = openAiClient(stack.url, user.apiKey);
  });
  afterAll(() => stack.close());

  /** A finished background response, its whole stream as first read, and its conversation's log key. */
  async function finishedResponse(): Promise<{ id: string; all: StreamEvent[]; logKey: string }> {
    const background = await client.responses.create({ input: scripted({ tokens: 30, tokenDelayMs: 2 }), background: true });
    const all = await collect(await client.responses.retrieve(background.id, { stream: true }));
    const record = await new OpenAiResponsesRepository(stack.resources.db).get(userId, background.id);
    return { id: background.id, all, logKey: `${stack.config.REDIS_PREFIX}:conv:{${record!.conversationId}}:events` };
  }

  /** What a reader resuming after `startingAfter` gets through the SDK. */
  async function resume(id: string, startingAfter?: number): Promise<StreamEvent[]> {
    return collect(await client.responses.retrieve(id, { stream: true, ...(startingAfter === undefined ? {} : { starting_after: startingAfter }) }));
  }

  it('after the early events were trimmed: the opening events, then the end with the stored response, numbered after starting_after', async () => {
    const { id, all, logKey } = await finishedResponse();
    const stored = await client.responses.retrieve(id);
    expect(stored.output_text.length).toBeGreaterThan(0);
    // The log drops the turn's first five events, as its cap does for a busy conversation.
    const [first] = (await stack.resources.redis.xrange(logKey, '-', '+', 'COUNT', 1)) as [string, string[]][];
    expect(await stack.resources.redis.xtrim(logKey, 'MINID', Number.parseInt(first![0], 10) + 5)).toBe(5);

    const fresh = await resume(id);
    expect(fresh.map((event) => [event.type, event.sequence_number])).toEqual([
      ['response.created', 0],
      ['response.queued', 1],
      ['response.completed', 2],
    ]);
    expect((fresh[2] as OpenAI.Responses.ResponseCompletedEvent).response).toMatchObject({ id, status: 'completed', output_text: stored.output_text, output: stored.output });

    // A reader that had part of the first stream gets the end only, after what it had.
    for (const after of [1, 10, all.length - 2]) {
      const resumed = await resume(id, after);
      expect(resumed.map((event) => [event.type, event.sequence_number])).toEqual([['response.completed', after + 1]]);
      expect((resumed[0] as OpenAI.Responses.ResponseCompletedEvent).response.output).toEqual(stored.output);
    }

    // The SDK's own resume helper reads the stream whole: its final response is the stored one.
    const final = await client.responses.stream({ response_id: id, starting_after: 10 }).finalResponse();
    expect(final.output_text).toBe(stored.output_text);
  });

  it('after the log expired: the same, and a resume past the end of the first stream still gets the end', async () => {
    const { id, all, logKey } = await finishedResponse();
    await stack.resources.redis.del(logKey);
    const resumed = await resume(id, all.length - 2);
    expect(resumed.map((event) => [event.type, event.sequence_number])).toEqual([['response.completed', all.length - 1]]);
    expect((resumed[0] as OpenAI.Responses.ResponseCompletedEvent).response).toMatchObject({ id, status: 'completed' });
  });

  it('while the turn runs: once it ends, its end, numbered after starting_after', async () => {
    const background = await client.responses.create({ input: scripted({ tokens: 2000, tokenDelayMs: 20 }), background: true });
    for await (const event of await client.responses.retrieve(background.id, { stream: true })) {
      if (event.type === 'response.output_text.delta') break;
    }
    const record = await new OpenAiResponsesRepository(stack.resources.db).get(userId, background.id);
    const logKey = `${stack.config.REDIS_PREFIX}:conv:{${record!.conversationId}}:events`;
    const [first] = (await stack.resources.redis.xrange(logKey, '-', '+', 'COUNT', 1)) as [string, string[]][];
    await stack.resources.redis.xtrim(logKey, 'MINID', Number.parseInt(first![0], 10) + 3);

    const stream = await client.responses.retrieve(background.id, { stream: true, starting_after: 5 });
    expect((await client.responses.cancel(background.id)).status).toBe('cancelled');
    const events = await collect(stream);
    expect(events.map((event) => [event.type, event.sequence_number])).toEqual([['response.incomplete', 6]]);
    expect((events[0] as OpenAI.Responses.ResponseIncompleteEvent).response).toMatchObject({ id: background.id, status: 'cancelled' });
  });
});
