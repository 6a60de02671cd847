import WebSocket from 'ws';
import { now, withTimeout } from './clock';

/** A Switchyard event as it arrives in an `event` frame (only the fields the suite reads are typed). */
export interface ReceivedEvent {
  type: string;
  seq: number;
  conversationId: string;
  turnId: string;
  delta?: string;
  [field: string]: unknown;
}

/** Called for every event frame with the time it was read off the socket (see clock.ts). */
export type EventListener = (event: ReceivedEvent, receivedAt: number) => void;

/**
 * A websocket client of the gateway that stamps each frame with the time it arrived, before
 * doing anything else with it. It keeps no history: listeners take what they need, so that
 * a thousand of these in one process stay cheap.
 */
export class TimedWsClient {
  onEvent: EventListener | undefined;
  onClose: (() => void) | undefined;
  /** `error` frames received (code: message), for the case's report. */
  readonly errors: string[] = [];
  closed: { code: number; reason: string } | undefined;
  private readonly pending = new Map<string, { resolve: (seq: number) => void; reject: (error: Error) => void }>();

  private constructor(private readonly socket: WebSocket) {
    socket.on('message', (data) => {
      const receivedAt = now();
      const frame = JSON.parse(String(data));
      if (frame.type === 'event') return this.onEvent?.(frame.event as ReceivedEvent, receivedAt);
      if (frame.type === 'subscribed') {
        this.pending.get(frame.conversationId)?.resolve(frame.seq);
        this.pending.delete(frame.conversationId);
        return;
      }
      if (frame.type === 'error') {
        this.errors.push(`${frame.code}: ${frame.message}`);
        const waiting = frame.conversationId ? this.pending.get(frame.conversationId) : undefined;
        waiting?.reject(new Error(`subscribe failed: ${frame.code}: ${frame.message}`));
        if (waiting) this.pending.delete(frame.conversationId);
      }
    });
    socket.on('close', (code, reason) => {
      this.closed = { code, reason: String(reason) };
      for (const waiting of this.pending.values()) waiting.reject(new Error(`websocket closed (${code}) while subscribing`));
      this.pending.clear();
      this.onClose?.();
    });
    socket.on('error', () => undefined);
  }

  static connect(baseUrl: string, apiKey: string, timeoutMs = 10_000): Promise<TimedWsClient> {
    const socket = new WebSocket(`${baseUrl.replace(/^http/, 'ws')}/v1/ws`, {
      headers: { authorization: `Bearer ${apiKey}` },
      perMessageDeflate: false,
    });
    const opened = new Promise<TimedWsClient>((resolve, reject) => {
      socket.once('open', () => resolve(new TimedWsClient(socket)));
      socket.once('unexpected-response', (_request, response) => reject(new Error(`websocket refused: HTTP ${response.statusCode}`)));
      socket.once('error', reject);
    });
    return withTimeout(opened, timeoutMs, 'a websocket handshake');
  }

  /** Subscribes and resolves with the `subscribed` frame's seq. */
  subscribe(conversationId: string, after?: number, timeoutMs = 10_000): Promise<number> {
    const subscribed = new Promise<number>((resolve, reject) => this.pending.set(conversationId, { resolve, reject }));
    this.socket.send(JSON.stringify({ type: 'subscribe', conversationId, ...(after === undefined ? {} : { after }) }));
    return withTimeout(subscribed, timeoutMs, `subscribed to ${conversationId}`);
  }

  /** Any frame (the raw broadcast server's control message). */
  sendRaw(frame: unknown): void {
    this.socket.send(JSON.stringify(frame));
  }

  unsubscribe(conversationId: string): void {
    this.socket.send(JSON.stringify({ type: 'unsubscribe', conversationId }));
  }

  get isOpen(): boolean {
    return this.socket.readyState === WebSocket.OPEN;
  }

  close(): Promise<void> {
    if (this.socket.readyState === WebSocket.CLOSED) return Promise.resolve();
    return new Promise((resolve) => {
      this.socket.once('close', () => resolve());
      this.socket.close();
      setTimeout(() => this.socket.terminate(), 2000).unref();
    });
  }
}

/** Connects `count` clients, `batch` handshakes at a time (a thousand at once would time out). */
export async function connectMany(baseUrl: string, apiKey: string, count: number, batch = 50): Promise<TimedWsClient[]> {
  const clients: TimedWsClient[] = [];
  for (let start = 0; start < count; start += batch) {
    const size = Math.min(batch, count - start);
    clients.push(...(await Promise.all(Array.from({ length: size }, () => TimedWsClient.connect(baseUrl, apiKey)))));
  }
  return clients;
}
