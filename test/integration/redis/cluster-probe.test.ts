import net from 'node:net';
import { probeCluster } from '../../../src/redis/redis-connection';

/** A start on REDIS_CLUSTER_NODES refuses, in one line, what is not a serving cluster. */
describe('probeCluster', () => {
  it('says a plain Redis is not a cluster node', async () => {
    expect(await probeCluster([{ host: '127.0.0.1', port: 6379 }])).toEqual({ reason: '127.0.0.1:6379 is not a cluster node (set REDIS_URL for one Redis)', refused: true });
  });

  it('says why a node does not answer, and goes on to the next node', async () => {
    const server = net.createServer();
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as net.AddressInfo;
    await new Promise<void>((resolve) => server.close(() => resolve()));
    expect(await probeCluster([{ host: '127.0.0.1', port }])).toEqual({ reason: expect.stringMatching(/^connection refused/), refused: false });
    // The last node's answer is what the start reports.
    expect(
      (
        await probeCluster([
          { host: '127.0.0.1', port },
          { host: '127.0.0.1', port: 6379 },
        ])
      )?.reason,
    ).toMatch(/not a cluster node/);
  });
});
