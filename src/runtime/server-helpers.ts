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
