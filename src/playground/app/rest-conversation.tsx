import type { UIMessage } from 'ai';
import { useEffect, useState } from 'react';
import { storedToUiMessages, type StoredMessage } from '@switchyard/protocol';
import { MessageList } from './message-list';
import { callApi, SessionExpiredError } from './session-api';

/**
 * A conversation made over the REST API, shown read-only: the page chats through `/api/chat`,
 * whose chat id is an `externalId`, and such a conversation has none; giving it one here would
 * change what its owner's code finds by it.
 */
export function RestConversation(props: { token: string; conversationId: string; onExpired(): void }) {
  const [messages, setMessages] = useState<UIMessage[] | null>(null);
  const [failure, setFailure] = useState<string | null>(null);
  const { token, conversationId, onExpired } = props;
  useEffect(() => {
    callApi<{ messages: StoredMessage[] }>(token, 'GET', `/v1/conversations/${encodeURIComponent(conversationId)}`).then(
      // Its messages only: tool cards need the turns' calls, which the chat route joins for chats.
      (stored) => setMessages(storedToUiMessages({ messages: stored.messages, turns: [], toolCalls: [] }) as UIMessage[]),
      (error) => (error instanceof SessionExpiredError ? onExpired() : setFailure(error instanceof Error ? error.message : String(error))),
    );
  }, [token, conversationId, onExpired]);
  if (failure) return <p className="hint error">{failure}</p>;
  if (!messages) return <p className="hint">Loading…</p>;
  return (
    <div className="chat">
      <MessageList messages={messages} />
      <p className="read-only-note" data-testid="read-only-note">
        Made over the REST API, so shown here read-only: continue it with <code>POST /v1/conversations/{conversationId}/turns</code>.
      </p>
    </div>
  );
}
