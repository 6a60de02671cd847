import type { UIMessage } from 'ai';
import { useEffect, useState } from 'react';
import { usageLine, type TurnUsage } from './usage-line';

/** Reads a turn's usage by its id (an assistant message's id is its turn's). */
export type LoadUsage = (turnId: string) => Promise<TurnUsage>;

const ENDED = new Set(['completed', 'failed', 'cancelled']);

/**
 * An ended turn's tokens and cost, under its answer. Read once the turn ended (its message's
 * `turnStatus`, live or stored): the ledger has every call of the turn by then, and a turn that
 * waits for a tool or a person is not done costing. Nothing shows if the read fails.
 */
export function TurnUsageLine({ message, loadUsage }: { message: UIMessage; loadUsage: LoadUsage }) {
  const status = (message.metadata as { turnStatus?: string } | undefined)?.turnStatus;
  const ended = message.role === 'assistant' && status !== undefined && ENDED.has(status);
  const [usage, setUsage] = useState<TurnUsage | null>(null);
  useEffect(() => {
    if (!ended) return;
    let current = true;
    loadUsage(message.id).then(
      (read) => current && setUsage(read),
      () => undefined,
    );
    return () => {
      current = false;
    };
  }, [ended, message.id, loadUsage]);
  if (!ended || !usage) return null;
  return (
    <div className="turn-usage" data-testid="turn-usage" title={`${usage.totalTokens} tokens, $${usage.costUsd} (GET /v1/turns/${message.id})`}>
      {usageLine(usage)}
    </div>
  );
}
