import { once } from 'node:events';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { Webhook } from 'standardwebhooks';
import { now } from './clock';

/**
 * A webhook receiver in the bench process, as a backend would run one: it verifies each
 * delivery's signature with the `standardwebhooks` package, answers 204 at once, and stamps
 * the arrival (when the request's headers came, on the suite's clock) of each turn's event by
 * its turnId. A delivery that fails verification is counted, not answered 2xx: Switchyard
 * would retry it, and the case reports it.
 */
export class WebhookSink {
  /** Arrival of each turn's first delivery, by turnId. */
  readonly arrivals = new Map<string, number>();
  rejected = 0;
  private verifier: Webhook | undefined;
  private waiting: { turnIds: Set<string>; resolve: () => void } | undefined;

  private constructor(private readonly server: http.Server) {}

  static async start(): Promise<WebhookSink> {
    const server = http.createServer({ keepAlive: true });
    const sink = new WebhookSink(server);
    server.on('request', (request, response) => sink.take(request, response));
    server.listen(0, '127.0.0.1');
    await once(server, 'listening');
    return sink;
  }

  get url(): string {
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}/switchyard`;
  }

  /** The endpoint's secret (`whsec_…`), as registration answered it. */
  useSecret(secret: string): void {
    this.verifier = new Webhook(secret);
  }

  /** Resolves once every one of `turnIds` has arrived; rejects after `timeoutMs` naming how many are missing. */
  async waitForTurns(turnIds: Iterable<string>, timeoutMs: number): Promise<void> {
    const missing = new Set([...turnIds].filter((turnId) => !this.arrivals.has(turnId)));
    if (missing.size === 0) return;
    let timer: NodeJS.Timeout | undefined;
    try {
      await new Promise<void>((resolve, reject) => {
        this.waiting = { turnIds: missing, resolve };
        timer = setTimeout(
          () => reject(new Error(`${missing.size} turns' webhooks had not arrived ${timeoutMs} ms after the load ended (${this.rejected} deliveries failed the signature check)`)),
          timeoutMs,
        );
      });
    } finally {
      clearTimeout(timer);
      this.waiting = undefined;
    }
  }

  close(): Promise<void> {
    this.server.closeAllConnections();
    return new Promise((resolve) => this.server.close(() => resolve()));
  }

  private take(request: http.IncomingMessage, response: http.ServerResponse): void {
    const arrivedAt = now();
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      const body = Buffer.concat(chunks).toString();
      let event: { data?: { turnId?: string } };
      try {
        if (!this.verifier) throw new Error('no secret yet');
        event = this.verifier.verify(body, request.headers as Record<string, string>) as typeof event;
      } catch {
        this.rejected++;
        response.writeHead(400).end();
        return;
      }
      response.writeHead(204).end();
      const turnId = event.data?.turnId;
      if (!turnId || this.arrivals.has(turnId)) return;
      this.arrivals.set(turnId, arrivedAt);
      if (this.waiting?.turnIds.delete(turnId) && this.waiting.turnIds.size === 0) this.waiting.resolve();
    });
  }
}
