import { setImmediate as yieldToLoop } from 'node:timers/promises';
import { WebSocketServer, type WebSocket } from 'ws';

/**
 * The raw `ws` broadcast baseline's server, run as its own process as Switchyard's gateway is:
 * a plain WebSocketServer that, when any client sends `{"type":"broadcast","messages":N}`,
 * sends N one-token frames shaped like Switchyard's text-delta event frames to every client,
 * then a `turn-finish` frame. Each frame is encoded once and the same bytes go to every socket
 * (as the gateway does); the loop yields after each frame, as the gateway does between two
 * pub/sub messages, so the sockets drain while it runs.
 */
const server = new WebSocketServer({ host: '127.0.0.1', port: Number(process.env.PORT ?? 0), perMessageDeflate: false });
const ids = { conversationId: 'conv_00000000-0000-0000-0000-000000000000', turnId: 'turn_00000000-0000-0000-0000-000000000000' };
const WORDS = ['lorem', 'ipsum', 'dolor', 'sit', 'amet'];

const frame = (event: Record<string, unknown>) => Buffer.from(JSON.stringify({ type: 'event', event }));

async function broadcast(messages: number): Promise<void> {
  const sockets = [...server.clients];
  for (let seq = 1; seq <= messages; seq++) {
    const bytes = frame({ seq, type: 'text-delta', ...ids, delta: ` ${WORDS[seq % WORDS.length]}` });
    for (const socket of sockets) socket.send(bytes, { binary: false });
    await yieldToLoop();
  }
  const finish = frame({ seq: messages + 1, type: 'turn-finish', ...ids, finishReason: 'stop' });
  for (const socket of sockets) socket.send(finish, { binary: false });
}

server.on('connection', (socket: WebSocket) => {
  socket.on('message', (data) => {
    const request = JSON.parse(String(data)) as { type?: string; messages?: number };
    if (request.type === 'broadcast') void broadcast(request.messages ?? 0);
  });
});

server.on('listening', () => {
  const address = server.address();
  process.stdout.write(`ws broadcast server listening on ${typeof address === 'object' && address ? address.port : address}\n`);
});

process.on('SIGTERM', () => server.close(() => process.exit(0)));
