import http from 'node:http';
import type net from 'node:net';
import { undiciRequestFetch } from '../../../src/providers/undici-request-fetch';
import { closedPort } from '../../support/ports';

/** The SDK's transport against a real HTTP server: it must answer as `fetch` answers. */
describe('undiciRequestFetch', () => {
  let server: http.Server;
  let url: string;
  const received: { method?: string; headers: http.IncomingHttpHeaders; body: string }[] = [];

  beforeAll(async () => {
    server = http.createServer((req, res) => {
      let body = '';
      req.on('data', (chunk: Buffer) => (body += chunk.toString()));
      req.on('end', () => {
        received.push({ method: req.method, headers: req.headers, body });
        if (req.url === '/empty') return res.writeHead(204).end();
        if (req.url === '/held') return; // never answers
        res.setHeader('set-cookie', ['a=1', 'b=2']);
        res.writeHead(429, { 'content-type': 'text/event-stream', 'retry-after': '3' });
        res.write('data: one\n\n');
        res.end('data: two\n\n');
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    url = `http://127.0.0.1:${(server.address() as net.AddressInfo).port}`;
  });
  afterAll(async () => {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  });

  it('sends the method, headers and body, and answers with the status, every header and the streamed body', async () => {
    const headers = new Headers({ 'content-type': 'application/json', authorization: 'Bearer k' });
    const response = await undiciRequestFetch(`${url}/chat`, { method: 'POST', headers, body: '{"x":1}' });

    expect(received.at(-1)).toMatchObject({ method: 'POST', body: '{"x":1}', headers: { 'content-type': 'application/json', authorization: 'Bearer k' } });
    expect(response.status).toBe(429);
    expect(response.ok).toBe(false);
    expect(response.headers.get('retry-after')).toBe('3');
    expect(response.headers.getSetCookie()).toEqual(['a=1', 'b=2']);
    expect(await response.text()).toBe('data: one\n\ndata: two\n\n');
  });

  it('answers a status without a body with a null body', async () => {
    const response = await undiciRequestFetch(`${url}/empty`, { method: 'DELETE' });
    expect(response.status).toBe(204);
    expect(response.body).toBeNull();
  });

  it('rejects a refused connection as fetch does: a TypeError whose cause says why', async () => {
    const failure = await undiciRequestFetch(`http://127.0.0.1:${await closedPort()}/`).catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(TypeError);
    expect(failure).toMatchObject({ message: 'fetch failed', cause: { code: 'ECONNREFUSED' } });
  });

  it("rejects an aborted request with the signal's reason", async () => {
    const controller = new AbortController();
    const pending = undiciRequestFetch(`${url}/held`, { signal: controller.signal });
    const reason = new DOMException('stopped', 'AbortError');
    controller.abort(reason);
    await expect(pending).rejects.toBe(reason);
  });
});
