import WebSocket from 'ws';

export interface ReceivedFrame {
  type: string;
  [key: string]: any;
}

/**
 * A websocket test client that records every frame and lets a test wait for a frame by
 * predicate (never by sleeping).
 */
/** A `waitFor` predicate: the event `type` of turn `turnId`. */
export const isEvent = (type: string, turnId: string) => (frame: any) => frame.type === 'event' && frame.event.type === type && frame.event.turnId === turnId;

export class TestWsClient {
  readonly frames: ReceivedFrame[] = [];
  private waiters: { predicate: (frame: ReceivedFrame) => boolean; resolve: (frame: ReceivedFrame) => void }[] = [];
  closed: { code: number; reason: string } | undefined;
  private readonly closedPromise: Promise<{ code: number; reason: string }>;

  private constructor(readonly socket: WebSocket) {
    socket.on('message', (data) => {
      const frame = JSON.parse(String(data)) as ReceivedFrame;
      this.frames.push(frame);
      this.waiters = this.waiters.filter((waiter) => {
        if (!waiter.predicate(frame)) return true;
        waiter.resolve(frame);
        return false;
      });
    });
    this.closedPromise = new Promise((resolve) =>
      socket.on('close', (code, reason) => {
        this.closed = { code, reason: String(reason) };
        resolve(this.closed);
      }),
    );
  }

  /** `autoPong: false` makes a peer that never answers the server's pings (ws answers them by default). */
  static connect(baseUrl: string, auth: { apiKey?: string; ticket?: string }, options: { autoPong?: boolean } = {}): Promise<TestWsClient> {
    const url = `${baseUrl.replace(/^http/, 'ws')}/v1/ws${auth.ticket ? `?ticket=${auth.ticket}` : ''}`;
    const socket = new WebSocket(url, { ...(auth.apiKey ? { headers: { authorization: `Bearer ${auth.apiKey}` } } : {}), autoPong: options.autoPong ?? true });
    return new Promise((resolve, reject) => {
      socket.once('open', () => resolve(new TestWsClient(socket)));
      socket.once('unexpected-response', (_req, res) => reject(new Error(`HTTP ${res.statusCode}`)));
      socket.once('error', reject);
    });
  }

  /**
   * Connects and subscribes to `conversationId` (from `after` when given); resolves once the
   * subscription is confirmed, and throws when it is refused.
   */
  static async subscribed(baseUrl: string, auth: { apiKey?: string; ticket?: string }, conversationId: string, after?: number): Promise<TestWsClient> {
    const client = await TestWsClient.connect(baseUrl, auth);
    client.send({ type: 'subscribe', conversationId, ...(after !== undefined ? { after } : {}) });
    await client.waitFor((frame) => frame.type === 'subscribed' || frame.type === 'error');
    const error = client.frames.find((frame) => frame.type === 'error');
    if (error) throw new Error(`subscribe failed: ${JSON.stringify(error)}`);
    return client;
  }

  send(frame: unknown): void {
    this.socket.send(typeof frame === 'string' ? frame : JSON.stringify(frame));
  }

  /** Resolves with the first frame (already received or future) that matches. */
  waitFor(predicate: (frame: ReceivedFrame) => boolean, timeoutMs = 20_000): Promise<ReceivedFrame> {
    const seen = this.frames.find(predicate);
    if (seen) return Promise.resolve(seen);
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`timed out waiting for a frame; got ${JSON.stringify(this.frames.slice(-5)).slice(0, 2_000)}`)), timeoutMs);
      this.waiters.push({
        predicate,
        resolve: (frame) => {
          clearTimeout(timer);
          resolve(frame);
        },
      });
    });
  }

  /** Waits for the turn's final event and returns all events of the conversation received so far. */
  async waitForTurnEnd(turnId: string, timeoutMs?: number): Promise<any[]> {
    await this.waitFor((frame) => frame.type === 'event' && frame.event.turnId === turnId && ['turn-finish', 'turn-error', 'turn-cancelled'].includes(frame.event.type), timeoutMs);
    return this.events();
  }

  events(): any[] {
    return this.frames.filter((frame) => frame.type === 'event').map((frame) => frame.event);
  }

  whenClosed(): Promise<{ code: number; reason: string }> {
    return this.closedPromise;
  }

  close(): void {
    this.socket.close();
  }
}
