import net from 'node:net';

/**
 * A port that was free a moment ago. The measured processes run with LOG_LEVEL=warn, so they
 * do not log the port they bound with PORT=0; we pick it for them instead (the tiny race with
 * another process taking it in between is acceptable on a benchmark machine).
 */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      const port = typeof address === 'object' && address ? address.port : 0;
      server.close(() => resolve(port));
    });
  });
}
