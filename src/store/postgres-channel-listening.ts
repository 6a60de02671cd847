import { Client } from 'pg';
import { coerceError } from '../errors/switchyard-error';
import type { ChannelListener, Listening } from './db';

/** The wait between attempts to listen again while they fail (the server is down). */
const RETRY_MS = 1000;

/**
 * Listens on `channel` over a connection of its own: LISTEN belongs to the session, and a pool's
 * connection is handed to other work. A connection that drops is opened again at once, then
 * every RETRY_MS while that fails; the listener hears of an outage once, and of each start.
 */
export function listenOnPostgres(connectionString: string, channel: string, listener: ChannelListener): Listening {
  let closed = false;
  let lost = false;
  let client: Client | undefined;
  let retry: NodeJS.Timeout | undefined;
  let connecting: Promise<void> = Promise.resolve();

  const connect = async () => {
    const candidate = new Client({ connectionString, connectionTimeoutMillis: 3000, query_timeout: 10_000, keepAlive: true });
    let listening = false;
    let dropped = false;
    // The 'error' and 'end' of one connection, and a failed connect, may all come: one handling.
    const drop = (error: Error) => {
      if (dropped) return;
      dropped = true;
      if (client === candidate) client = undefined;
      void candidate.end().catch(() => undefined);
      if (closed) return;
      if (!lost) {
        lost = true;
        listener.lost(error);
      }
      retry = setTimeout(
        () => {
          connecting = connect();
        },
        listening ? 0 : RETRY_MS,
      );
    };
    candidate.on('error', drop);
    candidate.on('end', () => drop(new Error('the listening connection ended')));
    candidate.on('notification', (message) => {
      if (message.channel === channel) listener.notified();
    });
    client = candidate;
    try {
      await candidate.connect();
      await candidate.query(`LISTEN "${channel}"`);
    } catch (error) {
      return drop(coerceError(error));
    }
    listening = true;
    lost = false;
    if (!closed) listener.listening();
  };
  connecting = connect();

  return {
    async close() {
      closed = true;
      clearTimeout(retry);
      await connecting;
      await client?.end().catch(() => undefined);
    },
  };
}
