import { useChat } from '@ai-sdk/react';
import { DefaultChatTransport, getToolName, isToolUIPart, lastAssistantMessageIsCompleteWithToolCalls, type UIMessage } from 'ai';
import { StrictMode, useCallback, useEffect, useMemo, useState, type FormEvent } from 'react';
import { createRoot } from 'react-dom/client';
import { callApi, mintSessionToken, SessionExpiredError, type ConversationSummary } from './session-api';
import { ToolCard } from './tool-card';
import { visibleParts } from './visible-parts';

/** Only the session token is kept (for this tab), never the API key it was minted with. */
const TOKEN_KEY = 'switchyard.sessionToken';

/** The client tool the example tools folder declares: it runs here, in the page. */
const CLIENT_TOOLS: Record<string, () => unknown> = {
  browser_timezone: () => ({ timeZone: Intl.DateTimeFormat().resolvedOptions().timeZone, locale: navigator.language }),
};

function App() {
  const [token, setToken] = useState(() => sessionStorage.getItem(TOKEN_KEY));
  const [chatId, setChatId] = useState(() => new URLSearchParams(location.hash.slice(1)).get('chat'));
  const [listVersion, setListVersion] = useState(0);

  const signOut = useCallback(() => {
    sessionStorage.removeItem(TOKEN_KEY);
    setToken(null);
  }, []);
  const open = (id: string) => {
    history.replaceState(null, '', `#chat=${encodeURIComponent(id)}`);
    setChatId(id);
  };

  if (!token) {
    return (
      <KeyForm
        onToken={(minted) => {
          sessionStorage.setItem(TOKEN_KEY, minted);
          setToken(minted);
        }}
      />
    );
  }
  return (
    <div className="layout">
      <Sidebar token={token} current={chatId} version={listVersion} onOpen={open} onNew={() => open(crypto.randomUUID())} onExpired={signOut} />
      <main>
        {chatId ? (
          <ChatLoader key={chatId} token={token} chatId={chatId} onExpired={signOut} onTurnEnd={() => setListVersion((v) => v + 1)} />
        ) : (
          <p className="hint">Open a conversation, or start a new chat.</p>
        )}
      </main>
    </div>
  );
}

function KeyForm({ onToken }: { onToken(token: string): void }) {
  const [error, setError] = useState<string | null>(null);
  const submit = async (event: FormEvent<HTMLFormElement>) => {
    event.preventDefault();
    const input = event.currentTarget.elements.namedItem('key') as HTMLInputElement;
    try {
      const { token } = await mintSessionToken(input.value.trim());
      input.value = '';
      onToken(token);
    } catch (failure) {
      setError(failure instanceof Error ? failure.message : String(failure));
    }
  };
  return (
    <form className="key-form" onSubmit={submit}>
      <h1>Switchyard playground</h1>
      <p>Paste an API key. It is exchanged for a short-lived session token and not kept in the page.</p>
      <input name="key" type="password" placeholder="sk_…" autoComplete="off" data-testid="key-input" />
      <button type="submit" data-testid="key-submit">Start</button>
      {error && <p className="error">{error}</p>}
    </form>
  );
}

function Sidebar(props: { token: string; current: string | null; version: number; onOpen(id: string): void; onNew(): void; onExpired(): void }) {
  const [conversations, setConversations] = useState<ConversationSummary[]>([]);
  const { token, version, onExpired } = props;
  useEffect(() => {
    callApi<{ data: ConversationSummary[] }>(token, 'GET', '/v1/conversations?limit=50').then(
      (page) => setConversations(page.data),
      (error) => error instanceof SessionExpiredError && onExpired(),
    );
  }, [token, version, onExpired]);
  return (
    <nav className="sidebar">
      <button onClick={props.onNew} data-testid="new-chat">
        New chat
      </button>
      <ul>
        {conversations
          .filter((conversation) => conversation.externalId)
          .map((conversation) => (
            <li key={conversation.id}>
              <button
                className={conversation.externalId === props.current ? 'current' : ''}
                onClick={() => props.onOpen(conversation.externalId!)}
                data-testid="conversation-item"
              >
                {conversation.title ?? conversation.externalId!.slice(0, 8)} <small>{new Date(conversation.createdAt).toLocaleString()}</small>
              </button>
            </li>
          ))}
      </ul>
      <button className="link" onClick={onExpired}>
        Sign out
      </button>
    </nav>
  );
}

/** Loads the stored history first (as UIMessages, `[]` for a new chat): `useChat` then resumes the active turn over it, if any. */
function ChatLoader(props: { token: string; chatId: string; onExpired(): void; onTurnEnd(): void }) {
  const [history, setHistory] = useState<UIMessage[] | null>(null);
  const { token, chatId, onExpired } = props;
  useEffect(() => {
    callApi<UIMessage[]>(token, 'GET', `/api/chat/${encodeURIComponent(chatId)}/messages`).then(setHistory, (error) =>
      error instanceof SessionExpiredError ? onExpired() : setHistory([]),
    );
  }, [token, chatId, onExpired]);
  if (!history) return <p className="hint">Loading…</p>;
  return <Chat {...props} initialMessages={history} />;
}

function Chat(props: { token: string; chatId: string; initialMessages: UIMessage[]; onTurnEnd(): void }) {
  const transport = useMemo(
    () =>
      new DefaultChatTransport({
        api: '/api/chat',
        headers: { authorization: `Bearer ${props.token}` },
        // Switchyard reads only the last message (stored history wins): the rest would only make a long chat's requests grow.
        prepareSendMessagesRequest: ({ id, messages, trigger, messageId }) => ({ body: { id, messages: messages.slice(-1), trigger, messageId } }),
      }),
    [props.token],
  );
  const { messages, sendMessage, status, error, addToolOutput } = useChat({
    id: props.chatId,
    messages: props.initialMessages,
    transport,
    // A reload in the middle of a turn picks its stream up again (GET /api/chat/:id/stream).
    resume: true,
    sendAutomaticallyWhen: lastAssistantMessageIsCompleteWithToolCalls,
    onToolCall: ({ toolCall }) => {
      const run = CLIENT_TOOLS[toolCall.toolName];
      if (run) void addToolOutput({ tool: toolCall.toolName, toolCallId: toolCall.toolCallId, output: run() as never });
    },
    onFinish: props.onTurnEnd,
  });
  const busy = status === 'submitted' || status === 'streaming';
  const last = messages.at(-1);
  const activeTurnId = busy && last?.role === 'assistant' ? last.id : null;
  const runningTools = activeTurnId !== null && toolProcessingStatus(last!) === 'start';

  const submit = (event: FormEvent<HTMLFormElement>) => {
    event.preventDefault();
    const input = event.currentTarget.elements.namedItem('message') as HTMLTextAreaElement;
    if (!input.value.trim() || busy) return;
    void sendMessage({ text: input.value });
    input.value = '';
  };
  const stop = () => {
    // The turn runs on the server: stopping it is cancelling it; the stream then ends with abort.
    if (activeTurnId) void fetch(`/v1/turns/${activeTurnId}/cancel`, { method: 'POST', headers: { authorization: `Bearer ${props.token}` } });
  };

  return (
    <div className="chat">
      <ol className="messages">
        {messages.map((message) => (
          <li key={message.id} className={`message ${message.role}`} data-testid={`${message.role}-message`}>
            {visibleParts(message.parts).map((part, index) => {
              if (part.type === 'text') return <p key={index}>{part.text}</p>;
              if (part.type === 'reasoning') return <p key={index} className="reasoning">{part.text}</p>;
              if (isToolUIPart(part)) return <ToolCard key={part.toolCallId} part={part} name={getToolName(part)} />;
              return null;
            })}
            <TurnMark metadata={message.metadata} />
          </li>
        ))}
      </ol>
      <div className="status-line">
        {runningTools && (
          <span className="running-tools" data-testid="running-tools">
            Running tools…
          </span>
        )}
        {error && <span className="error">{error.message}</span>}
      </div>
      <form className="composer" onSubmit={submit}>
        <textarea name="message" placeholder="Send a message" data-testid="message-input" rows={2} />
        <button type="submit" disabled={busy} data-testid="send-button">
          Send
        </button>
        <button type="button" onClick={stop} disabled={!activeTurnId} data-testid="stop-button">
          Stop
        </button>
      </form>
    </div>
  );
}

/** A turn that did not complete, as its message's metadata says (live, and after a reload). */
function TurnMark({ metadata }: { metadata: unknown }) {
  const status = (metadata as { turnStatus?: string } | undefined)?.turnStatus;
  if (status !== 'cancelled' && status !== 'failed') return null;
  return (
    <div className={`turn-mark ${status}`} data-testid="turn-mark" data-status={status}>
      {status === 'cancelled' ? 'Stopped' : 'Failed'}
    </div>
  );
}

/** The last `data-tool-processing` part's status: `start` while the step's tools run. */
function toolProcessingStatus(message: UIMessage): string | undefined {
  const part = message.parts.findLast((each) => each.type === 'data-tool-processing') as { data?: { status?: string } } | undefined;
  return part?.data?.status;
}

createRoot(document.getElementById('root')!).render(
  <StrictMode>
    <App />
  </StrictMode>,
);
