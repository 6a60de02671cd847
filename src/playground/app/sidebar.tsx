import { useCallback, useEffect, useState } from 'react';
import { callApi, SessionExpiredError, type AgentSummary, type ConversationSummary } from './session-api';

/**
 * A chat (`/api/chat`, by its externalId) or a conversation made over the REST API (by its id). A
 * new chat may name the agent its conversation is made with (`agent`, an agent's id).
 */
export type OpenTarget = { kind: 'chat'; id: string; agent?: string } | { kind: 'conversation'; id: string };

const PAGE_SIZE = 25;

/** The person's own chats: those of /api/chat and of the REST API, not what the OpenAI routes, batches and schedules make. */
const OWN_CHATS = 'chat,api';

/** How a conversation made elsewhere than /api/chat is tagged in the list. */
const SOURCE_TAGS: Partial<Record<ConversationSummary['source'], string>> = {
  api: 'REST',
  responses: 'OpenAI',
  'chat.completions': 'OpenAI',
  batch: 'batch',
  schedule: 'schedule',
};

interface Listed {
  conversations: ConversationSummary[];
  nextCursor: string | null;
  pages: number;
  /** Whether these are of every source: the pages of the other choice are dropped when it changes. */
  allSources: boolean;
}

/** What a conversation of the list opens: its chat when it has an externalId, else its read-only history. */
function targetOf(conversation: ConversationSummary): OpenTarget {
  return conversation.externalId ? { kind: 'chat', id: conversation.externalId } : { kind: 'conversation', id: conversation.id };
}

/**
 * The person's conversations, newest first, a page at a time: by default their own chats, those
 * of `/api/chat` and of the REST API (every `/openai/v1/responses` call and batch item is a
 * conversation too, and they would push the chats out); "All sources" lists every one.
 */
export function Sidebar(props: {
  token: string;
  current: OpenTarget | null;
  version: number;
  /** The person's agents, which a new chat may run on. */
  agents: AgentSummary[];
  onOpen(target: OpenTarget): void;
  onNew(agent: string | undefined): void;
  onExpired(): void;
}) {
  const [agent, setAgent] = useState('');
  const [listed, setListed] = useState<Listed>({ conversations: [], nextCursor: null, pages: 0, allSources: false });
  const [allSources, setAllSources] = useState(false);
  const { token, version, onExpired } = props;
  const fetchPage = useCallback(
    (cursor: string | null) =>
      callApi<{ data: ConversationSummary[]; nextCursor: string | null }>(
        token,
        'GET',
        `/v1/conversations?limit=${PAGE_SIZE}${allSources ? '' : `&source=${OWN_CHATS}`}${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`,
      ),
    [token, allSources],
  );
  const failed = useCallback((error: unknown) => error instanceof SessionExpiredError && onExpired(), [onExpired]);

  // Read again when a turn ends (a new chat is then listed): the first page, ahead of the pages already loaded.
  useEffect(() => {
    fetchPage(null).then(
      (page) =>
        setListed((before) => {
          if (before.pages <= 1 || before.allSources !== allSources) return { conversations: page.data, nextCursor: page.nextCursor, pages: 1, allSources };
          const fresh = new Set(page.data.map((conversation) => conversation.id));
          return { ...before, conversations: [...page.data, ...before.conversations.filter((conversation) => !fresh.has(conversation.id))] };
        }),
      failed,
    );
  }, [fetchPage, version, failed, allSources]);
  const loadMore = () => {
    if (!listed.nextCursor) return;
    fetchPage(listed.nextCursor).then(
      (page) => setListed((before) => ({ ...before, conversations: [...before.conversations, ...page.data], nextCursor: page.nextCursor, pages: before.pages + 1 })),
      failed,
    );
  };

  return (
    <nav className="sidebar">
      <button onClick={() => props.onNew(props.agents.some((each) => each.id === agent) ? agent : undefined)} data-testid="new-chat">
        New chat
      </button>
      {props.agents.length > 0 && (
        <label className="agent-pick">
          on{' '}
          <select value={agent} onChange={(event) => setAgent(event.target.value)} data-testid="agent-select">
            <option value="">no agent</option>
            {props.agents.map((each) => (
              <option key={each.id} value={each.id}>
                {each.name}
              </option>
            ))}
          </select>
        </label>
      )}
      <label className="source-filter">
        <input type="checkbox" checked={allSources} onChange={(event) => setAllSources(event.target.checked)} data-testid="all-sources" /> All sources (OpenAI, batches)
      </label>
      <ul>
        {listed.conversations.map((conversation) => {
          const target = targetOf(conversation);
          const current = props.current?.kind === target.kind && props.current.id === target.id;
          return (
            <li key={conversation.id}>
              <button
                className={current ? 'current' : ''}
                onClick={() => props.onOpen(target)}
                data-testid="conversation-item"
                data-kind={target.kind}
                data-id={conversation.id}
                data-source={conversation.source}
              >
                {conversation.title ?? target.id.slice(0, 8)}
                {SOURCE_TAGS[conversation.source] && <span className="tag">{SOURCE_TAGS[conversation.source]}</span>}
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
