import { randomUUID } from 'node:crypto';
import http from 'node:http';
import { createParser } from 'eventsource-parser';
import { now } from './clock';

/** Client-side timestamps of one POST to an AI SDK chat route, read as a UI message stream. */
export interface UiChatTiming {
  /** Just before the POST was written. */
  startedAt: number;
  /** When the first `text-delta` chunk arrived. */
  firstTextAt?: number;
  lastTextAt?: number;
  /** When the response ended. */
  endedAt: number;
  textChars: number;
  textChunks: number;
}

type UiMessage = { id: string; role: 'user'; parts: { type: 'text'; text: string }[] };

/**
 * What a chat route is sent: by default `{id, message}`, as the AI SDK's `DefaultChatTransport`
 * with the "send only the last message" option of the resume-streams page sends it.
 */
export type ChatRequestBody = (chatId: string, message: UiMessage) => unknown;

/** `useChat`'s default body, as Switchyard's /api/chat takes it. */
export const useChatBody: ChatRequestBody = (chatId, message) => ({ id: chatId, messages: [message], trigger: 'submit-message' });

/**
 * POSTs a chat message to a chat route and reads the SSE UI message stream. Each network read
 * is stamped before it is parsed, as the websocket clients of the suite stamp their frames;
 * `node:http` rather than `fetch`, as in ApiClient.
 */
export class UiChatClient {
  private readonly agent = new http.Agent({ keepAlive: true, maxSockets: 256 });
  private readonly base: URL;
  private readonly headers: Record<string, string>;
  private readonly body: ChatRequestBody;

  constructor(baseUrl: string, options: { apiKey?: string; body?: ChatRequestBody } = {}) {
    this.base = new URL(baseUrl);
    this.headers = options.apiKey ? { authorization: `Bearer ${options.apiKey}` } : {};
    this.body = options.body ?? ((chatId, message) => ({ id: chatId, message }));
  }

  /** `onText`: told the length of each text delta as it is read (for load that counts what it delivered). */
  post(chatId: string, text: string, timeoutMs = 60_000, onText?: (chars: number) => void): Promise<UiChatTiming> {
    const payload = JSON.stringify(this.body(chatId, { id: randomUUID(), role: 'user', parts: [{ type: 'text', text }] }));
    const timing: UiChatTiming = { startedAt: now(), endedAt: Number.NaN, textChars: 0, textChunks: 0 };
    return new Promise((resolve, reject) => {
      let failure: Error | undefined;
      let readAt = 0;
      const parser = createParser({
        onEvent(event) {
          if (event.data === '[DONE]') return;
          const chunk = JSON.parse(event.data) as { type: string; delta?: string; errorText?: string };
          if (chunk.type === 'text-delta') {
            timing.firstTextAt ??= readAt;
            timing.lastTextAt = readAt;
            timing.textChars += chunk.delta?.length ?? 0;
            onText?.(chunk.delta?.length ?? 0);
            timing.textChunks++;
          } else if (chunk.type === 'error') {
            failure ??= new Error(`the chat stream sent an error: ${chunk.errorText}`);
          }
        },
      });
      const request = http.request(
        {
          host: this.base.hostname,
          port: this.base.port,
          path: '/api/chat',
          method: 'POST',
          agent: this.agent,
          timeout: timeoutMs,
          headers: { ...this.headers, 'content-type': 'application/json', 'content-length': Buffer.byteLength(payload) },
        },
        (response) => {
          if (response.statusCode !== 200) {
            response.resume();
            reject(new Error(`POST /api/chat answered ${response.statusCode}`));
            return;
          }
          response.setEncoding('utf8');
          response.on('data', (data: string) => {
            readAt = now();
            parser.feed(data);
          });
          response.on('end', () => {
            timing.endedAt = now();
            if (failure) reject(failure);
            else if (timing.firstTextAt === undefined) reject(new Error('the chat stream ended without text'));
            else resolve(timing);
          });
          response.on('error', reject);
        },
      );
      request.on('timeout', () => request.destroy(new Error(`POST /api/chat did not end within ${timeoutMs} ms`)));
      request.on('error', reject);
      request.end(payload);
    });
  }

  close(): void {
    this.agent.destroy();
  }
}
