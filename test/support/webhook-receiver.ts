import http from 'node:http';
import { once } from 'node:events';
import type { AddressInfo } from 'node:net';
import { EventEmitter } from 'node:events';

/** A webhook request as the receiver got it. */
export interface ReceivedWebhook {
  headers: Record<string, string>;
  body: string;
  json: any;
  at: number;
}

/** How the receiver answers a request: a status, or never (the request hangs until the receiver closes). */
export type ReceiverAnswer = number | 'hang';

/**
 * A real HTTP receiver on 127.0.0.1 for webhook tests: records every request and answers by
 * `answers` (one per request in order; the last repeats), 200 by default. Waits are on its
 * requests, never on a clock.
 */
export class WebhookReceiver {
  readonly received: ReceivedWebhook[] = [];
  private readonly arrivals = new EventEmitter();
  private readonly hanging = new Set<http.ServerResponse>();
  answers: ReceiverAnswer[] = [200];

  private constructor(private readonly server: http.Server) {}

  static async start(answers: ReceiverAnswer[] = [200]): Promise<WebhookReceiver> {
    const server = http.createServer();
    const receiver = new WebhookReceiver(server);
    receiver.answers = answers;
    server.on('request', (req, res) => receiver.take(req, res));
    server.listen(0, '127.0.0.1');
    await once(server, 'listening');
    return receiver;
  }

  /** The receiver's URL on `host` (`localhost` goes through DNS resolution, `127.0.0.1` does not). */
  url(path = '/hook', host = '127.0.0.1'): string {
    return `http://${host}:${(this.server.address() as AddressInfo).port}${path}`;
  }

  /** Resolves once `count` requests (all paths) matching `filter` have arrived, with them. */
  async waitFor(count: number, filter: (webhook: ReceivedWebhook) => boolean = () => true, timeoutMs = 30_000): Promise<ReceivedWebhook[]> {
    const matching = () => this.received.filter(filter);
    if (matching().length >= count) return matching();
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.arrivals.off('arrival', check);
        reject(new Error(`waited ${timeoutMs} ms for ${count} webhooks; got ${matching().length}: ${JSON.stringify(this.received.map((w) => w.json?.type))}`));
      }, timeoutMs);
      const check = () => {
        if (matching().length < count) return;
        clearTimeout(timer);
        this.arrivals.off('arrival', check);
        resolve(matching());
      };
      this.arrivals.on('arrival', check);
    });
  }

  async close(): Promise<void> {
    for (const res of this.hanging) res.destroy();
    this.server.closeAllConnections();
    await new Promise((resolve) => this.server.close(resolve));
  }

  private take(req: http.IncomingMessage, res: http.ServerResponse): void {
    let body = '';
    req.setEncoding('utf8');
    req.on('data', (piece: string) => (body += piece));
    req.on('end', () => {
      const answer = this.answers[Math.min(this.received.length, this.answers.length - 1)] ?? 200;
      let json: unknown;
      try {
        json = JSON.parse(body);
      } catch {
        json = undefined;
      }
      this.received.push({ headers: req.headers as Record<string, string>, body, json, at: Date.now() });
      if (answer === 'hang') this.hanging.add(res);
      else res.writeHead(answer, { 'content-type': 'text/plain' }).end(answer >= 300 ? 'receiver error '.repeat(1000) : 'ok');
      this.arrivals.emit('arrival');
    });
  }
}
