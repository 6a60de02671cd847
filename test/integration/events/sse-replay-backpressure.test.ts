import http, { type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import express from 'express';
import { createTurnEventStreamer, type ConversationEventSource } from '../../../src/api/turn-event-stream';
import { OpenConnections } from '../../../src/auth/open-connections';
import type { LoggedEvent } from '../../../src/event-log/event-log';
import { startToolTurnHarness, type ToolTurnHarness } from '../../support/tool-turns';

/** The reader's allowance: what the server may hold for it (WS_MAX_BUFFERED_BYTES). */
const MAX_BUFFERED_BYTES = 64 * 1024;

/**
 * `GET /v1/turns/:id/events` of a finished turn, read by a client that stops reading. The
 * streamer runs on the stack's own event log (real Redis) behind a real HTTP server, so the
 * test holds the server's side of the response and sees what it buffers for that reader.
 */
describe('replaying a finished turn over SSE to a reader that stops reading', () => {
  let harness: ToolTurnHarness;
  let server: http.Server;
  let baseUrl: string;
  let served: (response: { res: ServerResponse; streamed: Promise<void> }) => void;

  beforeAll(async () => {
    harness = await startToolTurnHarness();
    const { eventLog, turns } = harness.stack.resources;
    const source: ConversationEventSource = {
      read: (conversationId, afterSeq, count) => eventLog.read(conversationId, afterSeq, count),
      window: (conversationId) => eventLog.window(conversationId),
      subscribe: () => Promise.reject(new Error('a finished turn is replayed, never followed')),
    };
    const streamer = createTurnEventStreamer(source, { connections: new OpenConnections(), maxBufferedBytes: MAX_BUFFERED_BYTES });
    const app = express();
    app.get('/turns/:id/events', async (req, res) => {
      const turn = (await turns.get(String(req.params.id)))!;
      served({ res, streamed: streamer.stream(turn, 'key_test', req, res) });
    });
    server = http.createServer(app);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(async () => {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
    await harness.close();
  });

  it('holds at most about WS_MAX_BUFFERED_BYTES for it, waiting for it to read; then sends every event once, in order', async () => {
    // Two steps of a million tokens each (about 11 MB of events).
    const run = await harness.runTurn({
      steps: [
        { tokens: 1_000_000, chunkTokens: 1_000, toolCalls: [{ name: 'calculator', arguments: { expression: '6*7' } }] },
        { tokens: 1_000_000, chunkTokens: 1_000 },
      ],
    });
    run.client.close();
    expect(run.events.at(-1)).toMatchObject({ type: 'turn-finish' });
    const logged = await turnEventsInLog(run.conversationId, run.turnId);
    const frames = logged.map((event) => `id: ${event.seq}\nevent: ${JSON.parse(event.json).type}\ndata: ${event.json}\n\n`);
    const largestFrame = Math.max(...frames.map((frame) => Buffer.byteLength(frame)));
    // Far more than the allowance and what the kernel's socket buffers on both ends take in
    // (a few MB on a loopback), so that the server's own buffer is what fills.
    expect(frames.join('').length).toBeGreaterThan(10 * 1024 * 1024);

    const servedResponse = new Promise<{ res: ServerResponse; streamed: Promise<void> }>((resolve) => (served = resolve));
    const reader = new Promise<IncomingMessage>((resolve, reject) => {
      const request = http.get(`${baseUrl}/turns/${run.turnId}/events`, (incoming) => {
        incoming.pause();
        resolve(incoming);
      });
      request.on('error', reject);
    });
    const { res, streamed } = await servedResponse;
    // The server stops to wait for the reader, or it writes the whole replay into its memory.
    const waiting = new Promise<void>((resolve) => res.on('newListener', (event) => event === 'drain' && resolve()));
    await Promise.race([waiting, streamed]);
    expect(res.writableLength).toBeLessThanOrEqual(MAX_BUFFERED_BYTES + largestFrame);

    const received = await readAll(await reader);
    await streamed;
    // Heartbeats (SSE comments) may come between events while the reader was paused.
    expect(received.replaceAll(': keep-alive\n\n', '')).toBe(frames.join(''));
  }, 120_000);

  async function turnEventsInLog(conversationId: string, turnId: string): Promise<LoggedEvent[]> {
    const events: LoggedEvent[] = [];
    for (let after = 0; ;) {
      const page = await harness.stack.resources.eventLog.read(conversationId, after);
      if (page.events.length === 0) return events;
      events.push(...page.events.filter((event) => JSON.parse(event.json).turnId === turnId));
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
