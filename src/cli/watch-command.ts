import WebSocket from 'ws';
import { SwitchyardClient } from '@switchyard/client';
import { describeUnreachable } from './api-unreachable';
import type { WatchFrame } from './watch-text';

/** Failed attempts at the first connection before `watch` gives up: past them, the URL is wrong or the API down. */
export const FIRST_CONNECT_ATTEMPTS = 5;

export interface WatchOptions {
  baseUrl: string;
  key: string;
  after?: number;
  /** Each frame followed: `subscribed`, `event`, `reloaded` (as JSON lines, or as text: watch-text.ts). */
  print(frame: WatchFrame): void;
  /** Human-facing lines (stderr). */
  say(line: string): void;
}

/**
 * `watch <conversationId>`: follows a conversation with the client library, which reconnects
 * and resumes by seq on its own once it has been connected. Until then, each failed attempt is
 * counted, and after {@link FIRST_CONNECT_ATTEMPTS} it gives up naming the URL and the cause.
 * Resolves with the exit code (0 on Ctrl-C).
 */
export function watchConversation(conversationId: string, options: WatchOptions): Promise<number> {
  const baseUrl = options.baseUrl.replace(/\/+$/, '');
  let attempts = 0;
  let connectedOnce = false;
  let outage = false;
  let cause = `the websocket at ${baseUrl.replace(/^http/, 'ws')}/v1/ws did not open`;
  let done: (code: number) => void = () => undefined;
  const ended = new Promise<number>((resolve) => (done = resolve));

  // Only the ticket request counts an attempt: one per connection the client makes.
  const countingFetch: typeof fetch = async (input, init) => {
    const url = typeof input === 'string' ? input : input instanceof URL ? input.href : input.url;
    if (!url.endsWith('/v1/ws-tickets')) return fetch(input, init);
    attempts++;
    try {
      const response = await fetch(input, init);
      if (response.ok) cause = `the websocket at ${baseUrl.replace(/^http/, 'ws')}/v1/ws did not open`;
      else if (response.status !== 401 && response.status !== 403) cause = `POST /v1/ws-tickets answered ${response.status} (is ${baseUrl} a Switchyard API?)`;
      return response;
    } catch (error) {
      cause = describeUnreachable(baseUrl, error);
      throw error;
    }
  };

  const client = new SwitchyardClient({
    baseUrl,
    token: options.key,
    WebSocket,
    fetch: countingFetch,
    onConnectionChange: (state) => {
      if (state === 'open') outage = false;
      if (state !== 'reconnecting') return;
      if (!connectedOnce && attempts >= FIRST_CONNECT_ATTEMPTS) {
        client.close();
        options.say(`watch: ${cause}; gave up after ${attempts} attempts`);
        return done(1);
      }
      if (connectedOnce && !outage) options.say(`connection to ${baseUrl} lost; reconnecting`);
      outage = connectedOnce;
    },
  });
  const subscription = client.subscribe(conversationId, {
    ...(options.after === undefined ? {} : { after: options.after }),
    // Printed as the server takes the subscription, so it comes before the replay's events.
    onSubscribed: () => {
      connectedOnce = true;
      options.print({ type: 'subscribed', conversationId, after: subscription.lastSeq ?? null });
    },
    onEvent: (event) => options.print({ type: 'event', event }),
    onReload: (conversation) => options.print({ type: 'reloaded', conversationId, lastSeq: conversation.lastSeq }),
    onError: (error) => {
      client.close();
      options.say(`watch: ${error.message}`);
      done(1);
    },
  });
  process.once('SIGINT', () => {
    client.close();
    done(0);
  });
  return ended;
}
