import net from 'node:net';

/**
 * A TCP proxy in front of PostgreSQL or Redis, so a test can make the server unreachable for
 * one stack only (the real server keeps serving every other test): `cut()` drops every
 * connection and refuses new ones until `restore()`; `freeze()` keeps them all open but
 * passes no byte either way (a hung server, a network dropping packets) until `restore()`.
 */
export interface TcpProxy {
  port: number;
  /** The target URL with its host and port replaced by the proxy's. */
  urlFor(url: string): string;
  cut(): void;
  freeze(): void;
  restore(): void;
  /**
   * Watches what the server sends back for `text` (found across chunk boundaries too): `seen()`
   * says whether it passed since the watch began. What a test reads through it is what the
   * stack read, whatever query read it.
   */
  watchReplies(text: string): { seen(): boolean; stop(): void };
  close(): Promise<void>;
}

export async function startTcpProxy(target: { host: string; port: number }): Promise<TcpProxy> {
  const sockets = new Set<net.Socket>();
  const pairs = new Set<{ client: net.Socket; upstream: net.Socket }>();
  /** Clients accepted while frozen, connected upstream on restore. */
  const held = new Set<net.Socket>();
  let refusing = false;
  let frozen = false;
  const watchers = new Set<(chunk: Buffer) => void>();
  const track = (socket: net.Socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
    socket.on('error', () => undefined);
  };
  const connect = (client: net.Socket) => {
    const upstream = net.connect(target.port, target.host);
    track(upstream);
    const pair = { client, upstream };
    pairs.add(pair);
    client.pipe(upstream);
    upstream.pipe(client);
    upstream.on('data', (chunk: Buffer) => {
      for (const watcher of watchers) watcher(chunk);
    });
    client.on('close', () => {
      pairs.delete(pair);
      upstream.destroy();
    });
    upstream.on('close', () => client.destroy());
  };
  const server = net.createServer((client) => {
    if (refusing) return client.destroy();
    track(client);
    if (!frozen) return connect(client);
    held.add(client);
    client.on('close', () => held.delete(client));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as net.AddressInfo;
  return {
    port,
    urlFor(url) {
      const parsed = new URL(url);
      parsed.hostname = '127.0.0.1';
      parsed.port = String(port);
      return parsed.toString();
    },
    cut() {
      refusing = true;
      for (const socket of sockets) socket.destroy();
    },
    freeze() {
      frozen = true;
      for (const { client, upstream } of pairs) {
        client.unpipe(upstream);
        upstream.unpipe(client);
        client.pause();
        upstream.pause();
      }
    },
    restore() {
      refusing = false;
      if (!frozen) return;
      frozen = false;
      for (const { client, upstream } of pairs) {
        client.pipe(upstream);
        upstream.pipe(client);
      }
      for (const client of held) connect(client);
      held.clear();
    },
    watchReplies(text) {
      const needle = Buffer.from(text);
      // Per connection would be exact; one carried tail over all of them can only add a false
      // match across two connections' chunks, which a needle of random text never makes.
      let tail = Buffer.alloc(0);
      let seen = false;
      const watcher = (chunk: Buffer) => {
        const joined = Buffer.concat([tail, chunk]);
        if (joined.includes(needle)) seen = true;
        tail = joined.subarray(Math.max(0, joined.length - needle.length + 1));
      };
      watchers.add(watcher);
      return { seen: () => seen, stop: () => watchers.delete(watcher) };
    },
    close: () =>
      new Promise<void>((resolve) => {
        refusing = true;
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  };
}

/** A proxy in front of the test PostgreSQL server (its URL: `proxy.urlFor(TEST_POSTGRES_URL)`). */
export function startPostgresProxy(url: string): Promise<TcpProxy> {
  const target = new URL(url);
  return startTcpProxy({ host: target.hostname, port: Number(target.port || 5432) });
}
