import type { UIMessage } from 'ai';

const OPEN_TURN_STATUSES = new Set(['queued', 'running', 'waiting_tools', 'waiting_approval', 'waiting_budget']);

/**
 * Whether the stored history ends in a turn that has not ended (its assistant message's
 * `metadata.turnStatus`): only then is there a stream to pick up with `resume`. Resuming a chat
 * whose turns all ended is not only a wasted request: when the person sends before its 204 comes
 * back, the AI SDK attaches that resume to the new turn beside the send's own stream, and the two
 * interleave (client tools answered twice, cards repeated). Pure.
 */
export function hasOpenTurn(history: UIMessage[]): boolean {
  const last = history.at(-1);
  const status = (last?.metadata as { turnStatus?: string } | undefined)?.turnStatus;
  return last?.role === 'assistant' && status !== undefined && OPEN_TURN_STATUSES.has(status);
}
