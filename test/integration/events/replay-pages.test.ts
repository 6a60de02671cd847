import http, { type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import express from 'express';
import type OpenAI from 'openai';
import { createResponseStreamer } from '../../../src/openai/routes/openai-response-stream';
import { createTurnEventStreamer, type ConversationEventSource } from '../../../src/api/turn-event-stream';
import { createUiMessageStreamer } from '../../../src/api/ui-message-stream';
import { OpenConnections } from '../../../src/auth/open-connections';
import type { ResponseObject } from '../../../src/openai/response-object';
import { OpenAiResponsesRepository, type ResponseRecord } from '../../../src/openai/store/openai-responses-repository';
import type { Turn } from '../../../src/store/turns-repository';
import { openAiClient } from '../../support/openai-sdk';
import { RedisMonitor } from '../../support/redis-monitor';
import { scripted } from '../../support/scripted';
import { startTestStack, type TestStack } from '../../support/stack';
import { TestWsClient } from '../../support/ws-client';

/** The reader's allowance (WS_MAX_BUFFERED_BYTES); a page of the log is a quarter of it. */
const MAX_BUFFERED_BYTES = 1024 * 1024;
const PAGE_BYTES = MAX_BUFFERED_BYTES / 4;

/** One read of the event log, as the streamer got it. */
interface PageRead {
  afterSeq: number;
  events: number;
  bytes: number;
}

/**
 * The three replays of a finished turn (`GET /v1/turns/:id/events`, `GET /api/chat/:id/stream`,
 * `GET /openai/v1/responses/:id?stream=true`) of a turn whose events weigh about 120 KB each,
 * to a reader that stops reading. Each streamer runs on the stack's own event log (real Redis)
 * behind a real HTTP server; the source hands it the log's pages as they are and notes their
 * size, so the test sees what the streamer holds besides its socket's backlog.
 */
describe('replaying a turn of large events to a reader that stops reading', () => {
  let stack: TestStack;
  let server: http.Server;
  let baseUrl: string;
  let turn: Turn;
  let record: ResponseRecord;
  let stored: OpenAI.Responses.Response;
  let apiKey: string;
  const pages: PageRead[] = [];
  let served: (response: { res: ServerResponse; streamed: Promise<void> }) => void;

  beforeAll(async () => {
    stack = await startTestStack({ workers: 1, env: { WS_MAX_BUFFERED_BYTES: String(MAX_BUFFERED_BYTES) } });
    const user = await stack.createUser('large-replays');
    apiKey = user.apiKey;
    // Two steps of 50 text deltas of 20,000 tokens (some 120 KB each): 11 MB, more than the
    // kernel's socket buffers on both ends of a loopback take in, so that the server's own
    // buffer fills. Switchyard's calculator (a function tool declaring no parameters) runs between them.
    const step = { tokens: 1_000_000, chunkTokens: 20_000 };
    const input = scripted({ steps: [{ ...step, toolCalls: [{ name: 'calculator', arguments: { expression: '6*7' } }] }, step] });
    const tools = [{ type: 'function', name: 'calculator' }] as unknown as OpenAI.Responses.Tool[];
    stored = await openAiClient(stack.url, user.apiKey).responses.create({ input, tools }, { timeout: 120_000 });
    expect([stored.status, stored.error]).toEqual(['completed', null]);
    record = (await new OpenAiResponsesRepository(stack.resources.db).get(user.id, stored.id))!;
    turn = (await stack.resources.turns.get(record.turnId))!;

    const { eventLog } = stack.resources;
    const source: ConversationEventSource = {
      read: async (conversationId, afterSeq, page) => {
        const read = await eventLog.read(conversationId, afterSeq, page);
        pages.push({ afterSeq, events: read.events.length, bytes: read.events.reduce((sum, event) => sum + Buffer.byteLength(event.json), 0) });
        return read;
      },
      window: (conversationId) => eventLog.window(conversationId),
      subscribe: () => Promise.reject(new Error('a finished turn is replayed, never followed')),
    };
    const options = { connections: new OpenConnections(), maxBufferedBytes: MAX_BUFFERED_BYTES };
    const events = createTurnEventStreamer(source, options);
    const ui = createUiMessageStreamer(source, { ...options, isClientTool: () => false });
    const responses = createResponseStreamer(source, { ...options, defaultModel: 'scripted', storedResponse: async () => stored as unknown as ResponseObject });
    const app = express();
    app.get('/events', (req, res) => served({ res, streamed: events.stream(turn, 'key_test', req, res) }));
    app.get('/ui', (_req, res) => served({ res, streamed: ui.stream({ turn, keyId: 'key_test', after: undefined, res }) }));
    app.get('/response', (_req, res) => served({ res, streamed: responses.stream({ record, turn, keyId: 'key_test', startingAfter: -1, res }) }));
    server = http.createServer(app);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  }, 180_000);
  afterAll(async () => {
    if (server) {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    }
    await stack?.close();
  });

  it.each([
    ['GET /v1/turns/:id/events', '/events', 'event: turn-finish\n'],
    ['GET /api/chat/:id/stream', '/ui', 'data: [DONE]\n\n'],
    ['GET /openai/v1/responses/:id?stream=true', '/response', 'event: response.completed\n'],
  ])(
    '%s reads the log a page of at most a quarter of WS_MAX_BUFFERED_BYTES at a time, and waits for the reader with about that much unsent',
    async (_route, path, end) => {
      pages.length = 0;
      const { res, streamed, reader } = await pausedRead(path);
      // The server stops to wait for the reader, or it writes the whole replay into its memory.
      const waiting = new Promise<void>((resolve) => res.on('newListener', (event) => event === 'drain' && resolve()));
      await Promise.race([waiting, streamed]);
      const sizes = await turnEventSizes();
      const largestEvent = Math.max(...sizes);
      expect(largestEvent).toBeGreaterThan(100 * 1024);
      expect(res.writableLength).toBeLessThanOrEqual(MAX_BUFFERED_BYTES + 2 * largestEvent);
      // It stopped reading too: what it read of the log in the pass that sends it (the UI stream
      // reads it once before, for what the replay must know, keeping no event) is far from the
      // turn: the kernel's buffers, its backlog and one page.
      const turnBytes = sizes.reduce((sum, size) => sum + size, 0);
      expect(turnBytes).toBeGreaterThan(12 * 1024 * 1024);
      const passStart = pages.findLastIndex((page, index) => index > 0 && page.afterSeq < pages[index - 1]!.afterSeq);
      expect(pages.slice(Math.max(0, passStart)).reduce((sum, page) => sum + page.bytes, 0)).toBeLessThan(8 * 1024 * 1024);

      const received = await readAll(reader);
      await streamed;
      expect(received).toContain(end);
      expect(received.length).toBeGreaterThan(10 * 1024 * 1024);
      // Every page within its budget (an event larger than it comes alone), several events to one where they fit.
      for (const page of pages) expect(page.events === 1 || page.bytes <= PAGE_BYTES).toBe(true);
      expect(Math.max(...pages.map((page) => page.events))).toBeGreaterThan(1);
    },
    120_000,
  );

  it("the websocket gateway's replay reads the log by the same pages", async () => {
    const streamKey = `${stack.config.REDIS_PREFIX}:conv:{${turn.conversationId}}:events`;
    const monitor = await RedisMonitor.start(stack.config.REDIS_URL!);
    const reads: string[][] = [];
    monitor.on('command', (args: string[]) => {
      const [command = '', , , key] = args;
      if (['xrange', 'evalsha', 'eval'].includes(command.toLowerCase()) && (args[1] === streamKey || key === streamKey)) reads.push(args);
    });
    const client = await TestWsClient.subscribed(stack.url, { apiKey }, turn.conversationId, record.afterSeq);
    // A client this far behind may be let go as a slow consumer (API.md): either way the replay was read.
    await Promise.race([client.waitForTurnEnd(turn.id, 60_000), client.whenClosed()]);
    client.close();
    monitor.close();
    const pageReads = reads.filter(([command]) => command!.toLowerCase() !== 'xrange');
    expect(pageReads.length).toBeGreaterThan(1);
    // Every page is bounded in bytes; the range reads are the window's and the page script's
    // short runs (MONITOR shows those too), never a count-bound page of the whole turn.
    for (const args of pageReads) expect(Number(args.at(-1))).toBe(PAGE_BYTES);
    const rangeCounts = reads.filter(([command]) => command!.toLowerCase() === 'xrange').map((args) => Number(args.at(-1)));
    expect(Math.max(...rangeCounts)).toBeLessThanOrEqual(64);
  }, 120_000);

  async function pausedRead(path: string): Promise<{ res: ServerResponse; streamed: Promise<void>; reader: IncomingMessage }> {
    const servedResponse = new Promise<{ res: ServerResponse; streamed: Promise<void> }>((resolve) => (served = resolve));
    const reader = new Promise<IncomingMessage>((resolve, reject) => {
      const request = http.get(`${baseUrl}${path}`, { agent: false }, (incoming) => {
        incoming.pause();
        resolve(incoming);
      });
      request.on('error', reject);
    });
    const { res, streamed } = await servedResponse;
    return { res, streamed, reader: await reader };
  }

  async function turnEventSizes(): Promise<number[]> {
    const sizes: number[] = [];
    for (let after = record.afterSeq; ;) {
      const page = await stack.resources.eventLog.read(turn.conversationId, after);
      if (page.events.length === 0) return sizes;
      sizes.push(...page.events.map((event) => Buffer.byteLength(event.json)));
      after = page.events.at(-1)!.seq;
    }
  }
});

function readAll(reader: IncomingMessage): Promise<string> {
  let text = '';
  reader.setEncoding('utf8');
  reader.on('data', (chunk: string) => (text += chunk));
  reader.resume();
  return new Promise((resolve, reject) => {
    reader.once('end', () => resolve(text));
    reader.once('error', reject);
  });
}
