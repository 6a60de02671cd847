import type http from 'node:http';
import type { Resources } from './resources';

/** Listens and resolves with the bound port (PORT=0 picks a free one). */
export function listen(server: http.Server, port: number, host: string): Promise<number> {
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      server.off('error', reject);
      const address = server.address();
      resolve(typeof address === 'object' && address ? address.port : port);
    });
  });
}

/** `/readyz`: both backing services answer within a second. */
export async function checkReady(resources: Pick<Resources, 'redis' | 'db'>): Promise<{ redis: boolean; database: boolean }> {
  const within = <T>(promise: Promise<T>) =>
    Promise.race([promise.then(() => true), new Promise<boolean>((resolve) => setTimeout(() => resolve(false), 1000).unref())]).catch(
      () => false,
    );
  const [redis, database] = await Promise.all([within(resources.redis.ping()), within(resources.db.query('SELECT 1'))]);
  return { redis, database };
}
