import type http from 'node:http';
import { describeListenFailure } from '../errors/listen-failure';

/**
 * Listens and resolves with the bound port (PORT=0 picks a free one); a port in use rejects
 * with one line naming PORT (a ListenFailedError), not a stack trace.
 */
export function listen(server: http.Server, port: number, host: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const onError = (error: Error) => reject(describeListenFailure(error, port, host));
    server.once('error', onError);
    server.listen(port, host, () => {
      server.off('error', onError);
      const address = server.address();
      resolve(typeof address === 'object' && address ? address.port : port);
    });
  });
}

/**
 * The HTTP server's timeouts: a request's headers and body must arrive within REQUEST_TIMEOUT_MS
 * (Node then answers 408 and closes the connection), and an idle keep-alive connection closes
 * after KEEP_ALIVE_TIMEOUT_MS. Node checks open requests every `connectionsCheckingInterval`
 * (30 s by default), which would let a short request timeout run long.
 */
export function httpServerTimeouts(config: {
  REQUEST_TIMEOUT_MS: number;
  KEEP_ALIVE_TIMEOUT_MS: number;
}): Pick<http.ServerOptions, 'requestTimeout' | 'headersTimeout' | 'connectionsCheckingInterval' | 'keepAliveTimeout'> {
  const requestTimeoutMs = config.REQUEST_TIMEOUT_MS;
  return {
    requestTimeout: requestTimeoutMs,
    // Node refuses a headers timeout longer than the request timeout.
    headersTimeout: Math.min(60_000, requestTimeoutMs),
    connectionsCheckingInterval: Math.min(30_000, Math.max(100, Math.ceil(requestTimeoutMs / 4))),
    keepAliveTimeout: config.KEEP_ALIVE_TIMEOUT_MS,
  };
}
