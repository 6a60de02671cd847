import { DefaultChatTransport, type UIMessage, type UIMessageChunk } from 'ai';
import { markCancelledTurns } from './turn-status';

/** `/api/chat` with the session token, as `useChat`'s transport. */
export class PlaygroundChatTransport extends DefaultChatTransport<UIMessage> {
  constructor(token: string) {
    super({
      api: '/api/chat',
      headers: { authorization: `Bearer ${token}` },
      // Switchyard reads only the last message (stored history wins): the rest would only make a long chat's requests grow.
      prepareSendMessagesRequest: ({ id, messages, trigger, messageId }) => ({ body: { id, messages: messages.slice(-1), trigger, messageId } }),
    });
  }

  protected override processResponseStream(stream: ReadableStream<Uint8Array>): ReadableStream<UIMessageChunk> {
    return super.processResponseStream(stream).pipeThrough(markCancelledTurns());
  }
}
