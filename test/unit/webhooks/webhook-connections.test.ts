import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { WebhookConnections } from '../../../src/webhooks/webhook-connections';
import { sendWebhook } from '../../../src/webhooks/webhook-sender';
import { resolveWebhookTarget } from '../../../src/webhooks/webhook-target';

/** A receiver on 127.0.0.1 that answers 204 and counts the connections it was opened. */
async function startReceiver(): Promise<{ port: number; connections: () => number; hosts: string[]; close(): Promise<void> }> {
  let connections = 0;
  const hosts: string[] = [];
  const server = http.createServer((request, response) => {
    hosts.push(request.headers.host ?? '');
    request.resume();
    request.on('end', () => response.writeHead(204).end());
  });
  server.on('connection', () => connections++);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    port: (server.address() as AddressInfo).port,
    connections: () => connections,
    hosts,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}

describe('webhook connections', () => {
  const send = (connections: WebhookConnections, target: Parameters<typeof sendWebhook>[0]) =>
    sendWebhook(target, connections.agentFor(target), { headers: {}, body: '{}', timeoutMs: 5000 });

  it('reuses one kept-alive connection for attempts to the same checked address', async () => {
    const receiver = await startReceiver();
    const connections = new WebhookConnections();
    try {
      const checked = await resolveWebhookTarget(`http://127.0.0.1:${receiver.port}/in`, { allowPrivateNetworks: true });
      if (!checked.ok) throw new Error(checked.reason);
      for (let attempt = 0; attempt < 10; attempt++) expect(await send(connections, checked.target)).toMatchObject({ kind: 'answered', statusCode: 204 });
      // The first connection can still be finishing its answer as the second attempt starts (then a second is opened); after that both are reused.
      expect(receiver.connections()).toBeLessThanOrEqual(2);
    } finally {
      await connections.close();
      await receiver.close();
    }
  });

  it('connects to the checked address whatever the name resolves to now, with the URL host in Host', async () => {
    const receiver = await startReceiver();
    const connections = new WebhookConnections();
    try {
      // `.invalid` never resolves: only the checked address can have been used.
      const checked = await resolveWebhookTarget(`http://hooks.invalid:${receiver.port}/in`, {
        allowPrivateNetworks: true,
        resolve: async () => [{ address: '127.0.0.1', family: 4 }],
      });
      if (!checked.ok) throw new Error(checked.reason);
      expect(await send(connections, checked.target)).toMatchObject({ kind: 'answered', statusCode: 204 });
      expect(receiver.hosts).toEqual([`hooks.invalid:${receiver.port}`]);
    } finally {
      await connections.close();
      await receiver.close();
    }
  });

  it('gives a host checked to other addresses connections of its own', async () => {
    const connections = new WebhookConnections();
    try {
      const target = (address: string) => ({ url: new URL('http://hooks.invalid/in'), addresses: [{ address, family: 4 as const }] });
      expect(connections.agentFor(target('127.0.0.1'))).toBe(connections.agentFor(target('127.0.0.1')));
      expect(connections.agentFor(target('127.0.0.2'))).not.toBe(connections.agentFor(target('127.0.0.1')));
    } finally {
      await connections.close();
    }
  });
});
