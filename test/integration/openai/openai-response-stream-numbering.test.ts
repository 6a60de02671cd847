import http from 'node:http';
import type { AddressInfo } from 'node:net';
import express from 'express';
import { Redis } from 'ioredis';
import OpenAI from 'openai';
import { OpenConnections } from '../../../src/auth/open-connections';
import { announceRevocation } from '../../../src/auth/revocation-watch';
import type { ConversationEventSource } from '../../../src/api/turn-event-stream';
import { LiveEvents } from '../../../src/event-log/live-events';
import type { ResponseObject } from '../../../src/openai/response-object';
import { createResponseStreamer } from '../../../src/openai/routes/openai-response-stream';
import { OpenAiResponsesRepository } from '../../../src/openai/store/openai-responses-repository';
import { subscribeToConversation } from '../../../src/subscriptions/conversation-subscription';
import { openAiClient } from '../../support/openai-sdk';
import { poll } from '../../support/poll';
import { markedScripted } from '../../support/scripted';
import { TEST_REDIS_URL } from '../../support/services';
import { startTestStack, type TestStack } from '../../support/stack';
import { collect } from '../../support/collect';

type StreamEvent = OpenAI.Responses.ResponseStreamEvent;

/** The SSE events of a raw stream, parsed. */
function sseEvents(text: string): { type: string; sequence_number: number; code?: string }[] {
  return text
    .split('\n\n')
    .filter((block) => block.startsWith('event:'))
    .map((block) => JSON.parse(block.split('\ndata: ')[1]!));
}

/**
 * A Responses API stream of a background response that is queued when its reader comes, and
 * the numbering of the events that end a stream early (docs/API.md, "OpenAI-compatible
 * routes"): the stream follows the turn once a worker takes it, and an `error` comes after the
 * last event the reader has, never as event 0.
 */
describe('OpenAI-compatible responses: streaming a queued response, and the numbering of an early end', () => {
  let stack: TestStack;
  let client: OpenAI;
  let userId: string;

  beforeAll(async () => {
    // No worker: a response stays queued until a test starts one.
    stack = await startTestStack({ workers: 0 });
    const user = await stack.createUser('stream-numbering');
    userId = user.id;
    client = openAiClient(stack.url, user.apiKey);
  });
  afterAll(() => stack.close());

  it('follows a queued response from its queued events into its turn once a worker takes it', async () => {
    const background = await client.responses.create({ input: markedScripted({ tokens: 40, tokenDelayMs: 2 }), background: true });
    expect(background.status).toBe('queued');
    let started = false;
    const all = await collect(await client.responses.retrieve(background.id, { stream: true }), async (event) => {
      // The worker starts once the reader has its opening events: the turn is queued until then.
      if (event.type === 'response.queued' && !started) {
        started = true;
        await stack.addWorker();
      }
    });
    expect(started).toBe(true);
    expect(all.map((event) => event.sequence_number)).toEqual(all.map((_, index) => index));
    expect(all.slice(0, 3).map((event) => event.type)).toEqual(['response.created', 'response.queued', 'response.in_progress']);
    expect(all.at(-1)!.type).toBe('response.completed');
    expect((all.at(-1) as OpenAI.Responses.ResponseCompletedEvent).response.output_text).toBe((await client.responses.retrieve(background.id)).output_text);
  }, 60_000);

  it("ends the stream of a response read while queued with its end when the log drops the turn's first events before the subscription", async () => {
    for (const worker of [...stack.workers]) await stack.stopWorker(worker);
    const background = await client.responses.create({ input: markedScripted({ tokens: 30, tokenDelayMs: 1 }), background: true });
    const record = (await new OpenAiResponsesRepository(stack.resources.db).get(userId, background.id))!;
    const queued = (await stack.resources.turns.get(record.turnId))!;
    expect(queued.status).toBe('queued');
    if (stack.workers.length === 0) await stack.addWorker();
    await poll('the response to complete', async () => (await client.responses.retrieve(background.id)).status === 'completed', 30_000);
    const stored = await client.responses.retrieve(background.id);

    // The streamer reads the log as the queued turn left it (none of its events yet); by the
    // time it subscribes, the turn has run and the log's cap has dropped all but its last event.
    const { eventLog } = stack.resources;
    const logKey = `${stack.config.REDIS_PREFIX}:conv:{${record.conversationId}}:events`;
    const subscriber = new Redis(TEST_REDIS_URL);
    const liveEvents = new LiveEvents(subscriber, (conversationId) => eventLog.channel(conversationId));
    let subscriptions = 0;
    let trimmed = 0;
    const source: ConversationEventSource = {
      read: async () => ({ events: [], full: false }),
      window: async () => ({ oldestSeq: null, latestSeq: record.afterSeq }),
      subscribe: async (input) => {
        subscriptions++;
        const { latestSeq } = await eventLog.window(record.conversationId);
        if (subscriptions === 1) trimmed = await stack.resources.redis.xtrim(logKey, 'MINID', latestSeq);
        return subscribeToConversation({ eventLog, liveEvents }, input);
      },
    };
    const streamer = createResponseStreamer(source, {
      connections: new OpenConnections(),
      defaultModel: 'scripted',
      storedResponse: async () => stored as unknown as ResponseObject,
    });
    const app = express();
    app.get('/response', (_req, res) => void streamer.stream({ record, turn: queued, keyId: 'key_test', startingAfter: -1, res }));
    const server = http.createServer(app);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    try {
      const text = await (await fetch(`http://127.0.0.1:${(server.address() as AddressInfo).port}/response`)).text();
      expect(sseEvents(text).map((event) => [event.type, event.sequence_number])).toEqual([
        ['response.created', 0],
        ['response.queued', 1],
        ['response.completed', 2],
      ]);
      expect(trimmed).toBeGreaterThan(20);
    } finally {
      subscriber.disconnect();
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    }
  }, 60_000);

  it('numbers the error that ends a stream whose key is revoked after the last event the reader has', async () => {
    if (stack.workers.length === 0) await stack.addWorker();
    const user = await stack.resources.users.createUserWithKey('revoked-stream');
    const own = openAiClient(stack.url, user.apiKey);
    const background = await own.responses.create({ input: markedScripted({ tokens: 2_000, tokenDelayMs: 10 }), background: true });
    const raw = await fetch(`${stack.url}/openai/v1/responses/${background.id}?stream=true`, { headers: { authorization: `Bearer ${user.apiKey}` } });
    const reader = raw.body!.getReader();
    const decoder = new TextDecoder();
    let text = '';
    let revoked = false;
    for (;;) {
      const { value, done } = await reader.read();
      if (done) break;
      text += decoder.decode(value, { stream: true });
      if (!revoked && text.includes('event: response.output_text.delta')) {
        revoked = true;
        await stack.resources.users.revokeApiKey(user.keyId);
        await announceRevocation(stack.resources.redis, stack.config.REDIS_PREFIX, user.keyId);
      }
    }
    const events = sseEvents(text);
    const last = events.at(-1)!;
    expect(last).toMatchObject({ type: 'error', code: 'unauthorized' });
    expect(events.slice(0, -1).map((event) => event.sequence_number)).toEqual(events.slice(0, -1).map((_, index) => index));
    expect(last.sequence_number).toBe(events.length - 1);
    await client.responses.cancel(background.id).catch(() => undefined);
  }, 60_000);
});
