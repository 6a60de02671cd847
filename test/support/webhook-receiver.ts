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
  /**
   * Settles when the answer's connection is done: `complete` when the whole answer was written,
   * false when the client cut it short; `at` when it was done.
   */
  answered: Promise<{ complete: boolean; at: number }>;
}

/**
 * How the receiver answers a request: a status (with a short body), never (the request hangs
 * until the receiver closes), a status with headers and a body of `bodyBytes` written as the
 * client reads it (`'endless'`: written until the client goes), or a status with these very bytes.
 */
export type ReceiverAnswer = number | 'hang' | { status: number; headers?: Record<string, string>; bodyBytes: number | 'endless' } | { status: number; body: Buffer };

/** What a streamed body is made of: text, so that the start a service keeps of it can be compared. */
export const STREAMED_BODY_TEXT = 'receiver error ';

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
  /** Requests whose answer's connection is not done yet, and the most there have been at once. */
  open = 0;
  mostOpen = 0;

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

  /** Answers every hanging request with `status`; later requests are answered by `answers` as before. */
  answerHanging(status = 200): void {
    for (const res of this.hanging) res.writeHead(status, { 'content-type': 'text/plain' }).end('ok');
    this.hanging.clear();
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
      this.open += 1;
      this.mostOpen = Math.max(this.mostOpen, this.open);
      const answered = new Promise<{ complete: boolean; at: number }>((resolve) =>
        res.on('close', () => {
          this.open -= 1;
          resolve({ complete: res.writableFinished, at: Date.now() });
        }),
      );
      this.received.push({ headers: req.headers as Record<string, string>, body, json, at: Date.now(), answered });
      if (answer === 'hang') this.hanging.add(res);
      else if (typeof answer === 'number') res.writeHead(answer, { 'content-type': 'text/plain' }).end(answer >= 300 ? STREAMED_BODY_TEXT.repeat(1000) : 'ok');
      else if ('body' in answer) res.writeHead(answer.status, { 'content-type': 'text/plain' }).end(answer.body);
      else streamBody(res.writeHead(answer.status, { 'content-type': 'text/plain', ...answer.headers }), answer.bodyBytes);
      this.arrivals.emit('arrival');
    });
  }
}

/** Writes `bytes` of STREAMED_BODY_TEXT (or more until the client goes), as fast as the client reads it. */
function streamBody(res: http.ServerResponse, bytes: number | 'endless'): void {
  const chunk = Buffer.from(STREAMED_BODY_TEXT.repeat(4096));
  let left = bytes === 'endless' ? Infinity : bytes;
  const pump = () => {
    while (!res.destroyed) {
      if (left === 0) return void res.end();
      const piece = left >= chunk.length ? chunk : chunk.subarray(0, left);
      left -= piece.length;
      if (!res.write(piece)) return void res.once('drain', pump);
    }
  };
  pump();
}
