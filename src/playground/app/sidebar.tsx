import { useCallback, useEffect, useState } from 'react';
import { callApi, SessionExpiredError, type ConversationSummary } from './session-api';

/** A chat (`/api/chat`, by its externalId) or a conversation made over the REST API (by its id). */
export type OpenTarget = { kind: 'chat'; id: string } | { kind: 'conversation'; id: string };

const PAGE_SIZE = 25;

interface Listed {
  conversations: ConversationSummary[];
  nextCursor: string | null;
  pages: number;
}

/** What a conversation of the list opens: its chat when it has an externalId, else its read-only history. */
function targetOf(conversation: ConversationSummary): OpenTarget {
  return conversation.externalId ? { kind: 'chat', id: conversation.externalId } : { kind: 'conversation', id: conversation.id };
}

/**
 * The person's conversations, newest first, a page at a time: those of `/api/chat` and of the
 * REST API, never the ones batch items run in (a large batch would push the chats out).
 */
export function Sidebar(props: { token: string; current: OpenTarget | null; version: number; onOpen(target: OpenTarget): void; onNew(): void; onExpired(): void }) {
  const [listed, setListed] = useState<Listed>({ conversations: [], nextCursor: null, pages: 0 });
  const { token, version, onExpired } = props;
  const fetchPage = useCallback(
    (cursor: string | null) =>
      callApi<{ data: ConversationSummary[]; nextCursor: string | null }>(
        token,
        'GET',
        `/v1/conversations?batch=false&limit=${PAGE_SIZE}${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`,
      ),
    [token],
  );
  const failed = useCallback((error: unknown) => error instanceof SessionExpiredError && onExpired(), [onExpired]);

  // Read again when a turn ends (a new chat is then listed): the first page, ahead of the pages already loaded.
  useEffect(() => {
    fetchPage(null).then(
      (page) =>
        setListed((before) => {
          if (before.pages <= 1) return { conversations: page.data, nextCursor: page.nextCursor, pages: 1 };
          const fresh = new Set(page.data.map((conversation) => conversation.id));
          return { ...before, conversations: [...page.data, ...before.conversations.filter((conversation) => !fresh.has(conversation.id))] };
        }),
      failed,
    );
  }, [fetchPage, version, failed]);
  const loadMore = () => {
    if (!listed.nextCursor) return;
    fetchPage(listed.nextCursor).then(
      (page) => setListed((before) => ({ conversations: [...before.conversations, ...page.data], nextCursor: page.nextCursor, pages: before.pages + 1 })),
      failed,
    );
  };

  return (
    <nav className="sidebar">
      <button onClick={props.onNew} data-testid="new-chat">
        New chat
      </button>
      <ul>
        {listed.conversations.map((conversation) => {
          const target = targetOf(conversation);
          const current = props.current?.kind === target.kind && props.current.id === target.id;
          return (
            <li key={conversation.id}>
              <button className={current ? 'current' : ''} onClick={() => props.onOpen(target)} data-testid="conversation-item" data-kind={target.kind} data-id={conversation.id}>
                {conversation.title ?? target.id.slice(0, 8)}
                {target.kind === 'conversation' && <span className="tag">REST</span>}
                <small>{new Date(conversation.createdAt).toLocaleString()}</small>
              </button>
            </li>
          );
        })}
      </ul>
      {listed.nextCursor && (
        <button className="link" onClick={loadMore} data-testid="load-more">
          Load more
        </button>
      )}
      <button className="link sign-out" onClick={onExpired}>
        Sign out
      </button>
    </nav>
  );
}
