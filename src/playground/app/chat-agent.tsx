import type { UIMessage } from 'ai';
import { useEffect, useState } from 'react';
import type { AgentSummary, TurnSummary } from './session-api';

const ENDED = new Set(['completed', 'failed', 'cancelled']);

interface RunsOn {
  agentId: string;
  /** Null before the chat's first turn: each turn runs the agent's latest version when it is admitted. */
  version: number | null;
}

/**
 * The chat's header: the agent it runs on, by name, and the version its last ended turn ran
 * (GET /v1/turns/:id: `agentId`, `agentVersion`, resolved when the turn was admitted), or, in a new
 * chat, the agent picked for it and its latest version, which its first turn will run. Nothing
 * shows for a chat without an agent.
 */
export function ChatAgentHeader(props: { messages: UIMessage[]; picked: string | undefined; agents: AgentSummary[]; readTurn(turnId: string): Promise<TurnSummary> }) {
  const { messages, picked, readTurn } = props;
  const lastEnded = messages.findLast((message) => message.role === 'assistant' && ENDED.has((message.metadata as { turnStatus?: string } | undefined)?.turnStatus ?? ''))?.id;
  const [ranOn, setRanOn] = useState<RunsOn | null>(null);
  useEffect(() => {
    if (!lastEnded) return;
    let current = true;
    readTurn(lastEnded).then(
      (turn) => current && setRanOn(turn.agentId ? { agentId: turn.agentId, version: turn.agentVersion ?? null } : null),
      () => undefined,
    );
    return () => {
      current = false;
    };
  }, [lastEnded, readTurn]);

  const runsOn: RunsOn | null = lastEnded ? ranOn : picked ? { agentId: picked, version: null } : null;
  if (!runsOn) return null;
  const agent = props.agents.find((each) => each.id === runsOn.agentId);
  const version = runsOn.version ?? agent?.latestVersion;
  return (
    <header className="chat-header" data-testid="chat-agent" data-agent-id={runsOn.agentId} data-agent-version={version ?? ''}>
      Agent <strong>{agent?.name ?? runsOn.agentId}</strong>
      {version !== undefined && <span className="agent-version"> · v{version}</span>}
    </header>
  );
}
