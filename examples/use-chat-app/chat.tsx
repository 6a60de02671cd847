import { Chat, useChat } from '@ai-sdk/react';
import { DefaultChatTransport, lastAssistantMessageIsCompleteWithApprovalResponses, lastAssistantMessageIsCompleteWithToolCalls, type UIMessage } from 'ai';
import { useEffect, useState, type FormEvent } from 'react';

/** Switchyard's origin, and a session token this page's own server minted for the signed-in user. */
interface Backend {
  api: string;
  token: string;
}

/** A chat: its stored history first (a reload shows it, pending approvals included), then useChat over it. */
export function ChatPage({ chatId, backend }: { chatId: string; backend: Backend }) {
  const [history, setHistory] = useState<UIMessage[] | null>(null);
  useEffect(() => {
    fetch(`${backend.api}/api/chat/${encodeURIComponent(chatId)}/messages`, { headers: { authorization: `Bearer ${backend.token}` } })
      .then((response) => response.json())
      .then(setHistory);
  }, [chatId, backend]);
  return history ? <ChatView key={chatId} chatId={chatId} backend={backend} history={history} /> : <p>Loading…</p>;
}

function ChatView({ chatId, backend, history }: { chatId: string; backend: Backend; history: UIMessage[] }) {
  // The page makes its Chat and hands it to useChat, rather than giving useChat the options: useChat
  // of AI SDK 6 (@ai-sdk/react 3) passes its Chat a wrapper of the transport that leaves out
  // `resumeStreamIsReplay`, so a stream resumed after a dropped connection would be appended to the
  // partial message instead of rebuilding it. Given a Chat, useChat uses it as it is, in both majors.
  const [chat] = useState(() => {
    const made: Chat<UIMessage> = new Chat({
      id: chatId, // the conversation's externalId: made on first use
      messages: history,
      transport: new DefaultChatTransport({
        api: `${backend.api}/api/chat`,
        headers: { authorization: `Bearer ${backend.token}` },
        // Switchyard reads only the last message: send only that one.
        prepareSendMessagesRequest: ({ id, messages, trigger, messageId }) => ({ body: { id, messages: messages.slice(-1), trigger, messageId } }),
      }),
      // A client tool's output or a person's decision completes the step: send it, the same turn goes on.
      sendAutomaticallyWhen: (options) => lastAssistantMessageIsCompleteWithToolCalls(options) || lastAssistantMessageIsCompleteWithApprovalResponses(options),
      // The client tool of examples/tools/browser.json: only a browser knows its user's time zone.
      onToolCall: ({ toolCall }) => {
        if (toolCall.toolName === 'browser_timezone') {
          void made.addToolOutput({ tool: 'browser_timezone', toolCallId: toolCall.toolCallId, output: { timeZone: Intl.DateTimeFormat().resolvedOptions().timeZone } });
        }
      },
    });
    return made;
  });
  const { messages, setMessages, sendMessage, status, error, resumeStream, addToolApprovalResponse } = useChat({ chat, resume: isOpen(history.at(-1)) });
  // A connection dropped mid-stream (Wi-Fi gone, laptop asleep) surfaces as `TypeError: network error`
  // while the turn runs on in Switchyard; `resume` does not pick it up (it is on only when the page
  // loaded into an open turn). If the stored turn is still open, resume: GET /api/chat/:id/stream
  // replays it from its start, which takes the partial message's place (the transport's
  // `resumeStreamIsReplay`, on by default); if it ended meanwhile, show it as stored.
  // Offline, wait to be back online; otherwise try again after a second (a failure is a new error).
  useEffect(() => {
    if (!(error instanceof TypeError)) return;
    const recover = async () => {
      const stored: UIMessage[] = await (
        await fetch(`${backend.api}/api/chat/${encodeURIComponent(chatId)}/messages`, { headers: { authorization: `Bearer ${backend.token}` } })
      ).json();
      if (isOpen(stored.at(-1))) await resumeStream();
      else setMessages(stored);
    };
    const retry = () => void recover().catch(() => setTimeout(retry, 1_000));
    if (!navigator.onLine) {
      window.addEventListener('online', retry, { once: true });
      return () => window.removeEventListener('online', retry);
    }
    const timer = setTimeout(retry, 1_000);
    return () => clearTimeout(timer);
  }, [error, resumeStream, setMessages, backend, chatId]);
  const send = (event: FormEvent<HTMLFormElement>) => {
    event.preventDefault();
    const input = event.currentTarget.elements.namedItem('text') as HTMLInputElement;
    sendMessage({ text: input.value });
    input.value = '';
  };
  return (
    <div>
      {messages.map((message) => (
        <div key={message.id} data-role={message.role}>
          {message.parts.map((part, index) => {
            if (part.type === 'text') return <p key={index}>{part.text}</p>;
            if (!part.type.startsWith('tool-') || !('state' in part)) return null;
            const tool = part.type.slice('tool-'.length);
            if (part.state === 'approval-requested') {
              return (
                <span key={index} data-tool={tool} data-state={part.state}>
                  {tool} wants to run with {JSON.stringify(part.input)}
                  <button onClick={() => addToolApprovalResponse({ id: part.approval.id, approved: true })}>Approve</button>
                  <button onClick={() => addToolApprovalResponse({ id: part.approval.id, approved: false, reason: 'not now' })}>Deny</button>
                </span>
              );
            }
            return (
              <code key={index} data-tool={tool} data-state={part.state}>
                {tool}: {part.state === 'output-available' ? JSON.stringify(part.output) : part.state}
              </code>
            );
          })}
        </div>
      ))}
      <form onSubmit={send}>
        <input name="text" />
        <button type="submit" disabled={status !== 'ready'}>
          Send
        </button>
      </form>
    </div>
  );
}

/** Whether a stored message is the assistant message of a turn still open (GET /api/chat/:id/stream replays it). */
function isOpen(message: UIMessage | undefined): boolean {
  return ['queued', 'running', 'waiting_tools', 'waiting_approval'].includes((message?.metadata as { turnStatus?: string } | undefined)?.turnStatus ?? '');
}
