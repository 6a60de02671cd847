import { createHash } from 'node:crypto';
import WebSocket from 'ws';
import { SwitchyardClient, SwitchyardApiError } from '@switchyard/client';
import { poll } from '../support/poll';
import { startTcpProxy, type TcpProxy } from '../support/tcp-proxy';
import { scripted, startToolTurnHarness, type ToolTurnHarness } from '../support/tool-turns';

/** The client package given a token provider, against a server whose session tokens live one second. */
describe('the client package with a token provider', () => {
  let harness: ToolTurnHarness;
  let proxy: TcpProxy;
  const clients: SwitchyardClient[] = [];

  beforeAll(async () => {
    harness = await startToolTurnHarness({ env: { SESSION_TOKEN_TTL_SECONDS: '1' } });
    proxy = await startTcpProxy({ host: '127.0.0.1', port: Number(new URL(harness.stack.url).port) });
  });
  afterAll(async () => {
    for (const client of clients) client.close();
    await proxy.close();
    await harness.close();
  });

  /** A provider as a page's backend would be: each call mints a session token with the API key. */
  const mintingProvider = () => {
    const minted: string[] = [];
    const provider = async () => {
      const { token } = (await harness.api.post('/v1/session-tokens', {})).body as { token: string };
      minted.push(token);
      return token;
    };
    return { provider, minted };
  };
  /** Expiry emits nothing to wait for: poll Redis until the token's key is gone (its TTL is one second). */
  const expired = (token: string) => {
    const key = `${harness.stack.config.REDIS_PREFIX}:session:${createHash('sha256').update(token).digest('hex')}`;
    return poll('the session token did not expire', async () => (await harness.stack.resources.redis.exists(key)) === 0, 3000);
  };

  it('renews an expired token once and sends the request again: concurrent requests share one renewal', async () => {
    const { provider, minted } = mintingProvider();
    const client = new SwitchyardClient({ baseUrl: harness.stack.url, token: provider, WebSocket });
    clients.push(client);
    const conversation = await client.createConversation({ title: 'renewed' });
    expect(minted).toHaveLength(1);

    await expired(minted[0]!);
    const accepted = await client.sendTurn(conversation.id, scripted({ text: 'after the renewal' }));
    expect(accepted.turnId).toEqual(expect.any(String));
    expect(minted).toHaveLength(2);

    await expired(minted[1]!);
    const read = await Promise.all([client.getConversation(conversation.id), client.getTurn(accepted.turnId), client.getConversation(conversation.id)]);
    expect(read.map((each) => each.id)).toEqual([conversation.id, accepted.turnId, conversation.id]);
    expect(minted).toHaveLength(3);
  });

  it('gives a fixed token that expired as the 401 token_expired it is, renewing nothing', async () => {
    const { provider, minted } = mintingProvider();
    const token = await provider();
    const client = new SwitchyardClient({ baseUrl: harness.stack.url, token, WebSocket });
    clients.push(client);
    await expired(minted[0]!);
    const refused = await client.createConversation().catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(SwitchyardApiError);
    expect(refused).toMatchObject({ status: 401, code: 'token_expired' });
  });

  it('resubscribes after a reconnect with a renewed token: the new ticket is got with it, and the turn is followed to its end', async () => {
    const { provider, minted } = mintingProvider();
    let subscribed = 0;
    let resubscribed = () => {};
    const again = new Promise<void>((resolve) => (resubscribed = resolve));
    const client = new SwitchyardClient({ baseUrl: `http://127.0.0.1:${proxy.port}`, token: provider, WebSocket, reconnect: { initialDelayMs: 20, maxDelayMs: 200 } });
    clients.push(client);
    const conversationId = await harness.newConversation();
    const subscription = client.subscribe(conversationId, {
      onSubscribed: () => {
        if (++subscribed === 2) resubscribed();
      },
    });
    await subscription.ready;
    expect(minted).toHaveLength(1);

    await expired(minted[0]!);
    proxy.cut();
    proxy.restore();
    await again;
    expect(minted).toHaveLength(2);
    const text = 'Followed after the renewal.';
    const { turnId } = await harness.postTurn(conversationId, { text });
    const view = await subscription.followTurn(turnId);
    expect({ status: view.status, text: view.text }).toEqual({ status: 'completed', text });
  });

  it('says so when the provider fails', async () => {
    const client = new SwitchyardClient({ baseUrl: harness.stack.url, token: () => Promise.reject(new Error('the backend is down')), WebSocket });
    clients.push(client);
    await expect(client.createConversation()).rejects.toMatchObject({ status: 0, code: 'token_unavailable', message: 'the token provider failed: the backend is down' });
  });
});
