import { useChat } from '@ai-sdk/react';
import { DefaultChatTransport, lastAssistantMessageIsCompleteWithApprovalResponses, lastAssistantMessageIsCompleteWithToolCalls, type UIMessage } from 'ai';
import { StrictMode, useCallback, useEffect, useMemo, useState, type FormEvent, type KeyboardEvent } from 'react';
import { createRoot } from 'react-dom/client';
import { MessageList } from './message-list';
import { hasOpenTurn } from './open-turn';
import { RestConversation } from './rest-conversation';
import { keepSettledCalls } from './settled-calls';
import { ChatAgentHeader } from './chat-agent';
import { callApi, endedTurnReader, listAgents, mintSessionToken, SessionExpiredError, type AgentSummary } from './session-api';
import { Sidebar, type OpenTarget } from './sidebar';

/** Only the session token is kept (for this tab), never the API key it was minted with. */
const TOKEN_KEY = 'switchyard.sessionToken';
/** The person's agents as listed at sign-in (ids, names, latest versions): the token cannot list them. */
const AGENTS_KEY = 'switchyard.agents';

/** The client tool the example tools folder declares: it runs here, in the page. */
const CLIENT_TOOLS: Record<string, () => unknown> = {
  browser_timezone: () => ({ timeZone: Intl.DateTimeFormat().resolvedOptions().timeZone, locale: navigator.language }),
};

function App() {
  const [token, setToken] = useState(() => sessionStorage.getItem(TOKEN_KEY));
  const [agents, setAgents] = useState<AgentSummary[]>(() => JSON.parse(sessionStorage.getItem(AGENTS_KEY) ?? '[]'));
  const [opened, setOpened] = useState(targetInHash);
  const [listVersion, setListVersion] = useState(0);

  const signOut = useCallback(() => {
    sessionStorage.removeItem(TOKEN_KEY);
    sessionStorage.removeItem(AGENTS_KEY);
    setToken(null);
    setAgents([]);
  }, []);
  const open = (target: OpenTarget) => {
    history.replaceState(null, '', `#${target.kind}=${encodeURIComponent(target.id)}`);
    setOpened(target);
  };

  if (!token) {
    return (
      <KeyForm
        onSignIn={(minted, listed) => {
          sessionStorage.setItem(TOKEN_KEY, minted);
          sessionStorage.setItem(AGENTS_KEY, JSON.stringify(listed));
          setAgents(listed);
          setToken(minted);
        }}
      />
    );
  }
  return (
    <div className="layout">
      <Sidebar
        token={token}
        current={opened}
        version={listVersion}
        agents={agents}
        onOpen={open}
        onNew={(agent) => open({ kind: 'chat', id: crypto.randomUUID(), ...(agent ? { agent } : {}) })}
        onExpired={signOut}
      />
      <main>
        {opened?.kind === 'chat' && (
          <ChatLoader key={opened.id} token={token} chatId={opened.id} agent={opened.agent} agents={agents} onExpired={signOut} onTurnEnd={() => setListVersion((v) => v + 1)} />
        )}
        {opened?.kind === 'conversation' && <RestConversation key={opened.id} token={token} conversationId={opened.id} onExpired={signOut} />}
        {!opened && <p className="hint">Open a conversation, or start a new chat.</p>}
      </main>
    </div>
  );
}

/** What the address opens: `#chat=<externalId>` or `#conversation=<id>`. */
function targetInHash(): OpenTarget | null {
  const params = new URLSearchParams(location.hash.slice(1));
  const chat = params.get('chat');
  if (chat) return { kind: 'chat', id: chat };
  const conversation = params.get('conversation');
  return conversation ? { kind: 'conversation', id: conversation } : null;
}

function KeyForm({ onSignIn }: { onSignIn(token: string, agents: AgentSummary[]): void }) {
  const [error, setError] = useState<string | null>(null);
  const submit = async (event: FormEvent<HTMLFormElement>) => {
    event.preventDefault();
    const input = event.currentTarget.elements.namedItem('key') as HTMLInputElement;
    try {
      const key = input.value.trim();
      const { token } = await mintSessionToken(key);
      const agents = await listAgents(key);
      input.value = '';
      onSignIn(token, agents);
    } catch (failure) {
      setError(failure instanceof Error ? failure.message : String(failure));
    }
  };
  return (
    <form className="key-form" onSubmit={(event) => void submit(event)}>
      <h1>Switchyard playground</h1>
      <p>Paste an API key. It is exchanged for a short-lived session token and not kept in the page.</p>
      <input name="key" type="password" placeholder="sy_…" autoComplete="off" data-testid="key-input" />
      <button type="submit" data-testid="key-submit">
        Start
      </button>
      {error && <p className="error">{error}</p>}
    </form>
  );
}

/** Loads the stored history first (as UIMessages, `[]` for a new chat): `useChat` then resumes the active turn over it, if any. */
function ChatLoader(props: { token: string; chatId: string; agent?: string; agents: AgentSummary[]; onExpired(): void; onTurnEnd(): void }) {
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

function Chat(props: { token: string; chatId: string; agent?: string; agents: AgentSummary[]; initialMessages: UIMessage[]; onTurnEnd(): void }) {
  // The agent picked for a new chat: read on the chat's first POST, when its conversation is made (later ones change nothing).
  const agent = props.initialMessages.length === 0 ? props.agent : undefined;
  const transport = useMemo(
    () =>
      new DefaultChatTransport({
        api: '/api/chat',
        headers: { authorization: `Bearer ${props.token}` },
        // Switchyard reads only the last message (stored history wins): the rest would only make a long chat's requests grow.
        prepareSendMessagesRequest: ({ id, messages, trigger, messageId }) => ({ body: { id, messages: messages.slice(-1), trigger, messageId, ...(agent ? { agent } : {}) } }),
      }),
    [props.token, agent],
  );
  const readTurn = useMemo(() => endedTurnReader(props.token), [props.token]);
  const { messages, setMessages, sendMessage, regenerate, status, error, addToolOutput, addToolApprovalResponse } = useChat({
    id: props.chatId,
    messages: props.initialMessages,
    transport,
    // A reload in the middle of a turn picks its stream up again (GET /api/chat/:id/stream).
    resume: hasOpenTurn(props.initialMessages),
    // The turn goes on once every call of the step has its answer: a browser tool's output, or a person's decision.
    sendAutomaticallyWhen: (options) => lastAssistantMessageIsCompleteWithToolCalls(options) || lastAssistantMessageIsCompleteWithApprovalResponses(options),
    onToolCall: ({ toolCall }) => {
      const run = CLIENT_TOOLS[toolCall.toolName];
      if (!run) return;
      // As last rendered: the earlier turns, whose calls may carry the same id, are settled by now.
      const before = messages;
      void (async () => {
        await addToolOutput({ tool: toolCall.toolName, toolCallId: toolCall.toolCallId, output: run() as never });
        setMessages((after) => keepSettledCalls(before, after, toolCall.toolCallId));
      })();
    },
    onFinish: props.onTurnEnd,
  });
  const loadUsage = useCallback((turnId: string) => readTurn(turnId).then((turn) => turn.usage), [readTurn]);
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
  const sendOnEnter = (event: KeyboardEvent<HTMLTextAreaElement>) => {
    // Shift+Enter is a new line; an Enter that confirms an input method's composition is neither.
    if (event.key !== 'Enter' || event.shiftKey || event.nativeEvent.isComposing) return;
    event.preventDefault();
    event.currentTarget.form?.requestSubmit();
  };
  const stop = () => {
    // The turn runs on the server: stopping it is cancelling it; the stream then ends with abort.
    if (activeTurnId) void fetch(`/v1/turns/${activeTurnId}/cancel`, { method: 'POST', headers: { authorization: `Bearer ${props.token}` } });
  };

  return (
    <div className="chat">
      <ChatAgentHeader messages={messages} picked={agent} agents={props.agents} readTurn={readTurn} />
      <MessageList
        messages={messages}
        loadUsage={loadUsage}
        onDecide={(decision) => void addToolApprovalResponse(decision)}
        actions={{
          disabled: busy,
          onEdit: (messageId, text) => void sendMessage({ text, messageId }),
          onRegenerate: () => void regenerate(),
        }}
      />
      <div className="status-line">
        {runningTools && (
          <span className="running-tools" data-testid="running-tools">
            Running tools…
          </span>
        )}
        {error && <span className="error">{error.message}</span>}
      </div>
      <form className="composer" onSubmit={submit}>
        <textarea name="message" placeholder="Send a message (Shift+Enter: new line)" data-testid="message-input" rows={2} onKeyDown={sendOnEnter} />
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

/**
 * The status of the step's tools: `start` while they run. Each step's `data-tool-processing` part
 * (id `<turnId>:<step>`) is updated in place from `start` to `complete`, so the last one is the
 * current step's.
 */
function toolProcessingStatus(message: UIMessage): string | undefined {
  const part = message.parts.findLast((each) => each.type === 'data-tool-processing') as { data?: { status?: string } } | undefined;
  return part?.data?.status;
}

createRoot(document.getElementById('root')!).render(
  <StrictMode>
    <App />
  </StrictMode>,
);
