import type { DynamicToolUIPart, ToolUIPart } from 'ai';

const STATE_LABELS: Record<string, string> = {
  'input-streaming': 'arguments streaming…',
  'input-available': 'running…',
  'output-available': 'done',
  'output-error': 'failed',
  'approval-requested': 'waiting for your approval',
  'output-denied': 'denied',
};

/** A person's answer to a call that waits for approval (useChat's `addToolApprovalResponse`). */
export type DecideApproval = (decision: { id: string; approved: boolean }) => void;

/**
 * One tool call: its arguments as they stream in, then its result or error, attempts and time.
 * A call waiting for approval offers Approve and Deny; the decision is the server's to keep, so
 * a reload shows the same buttons until someone decides. A read-only list passes no `onDecide`.
 */
export function ToolCard({ part, name, onDecide }: { part: ToolUIPart | DynamicToolUIPart; name: string; onDecide?: DecideApproval | undefined }) {
  const facts = (part as { toolMetadata?: { attempts?: number; durationMs?: number } }).toolMetadata;
  const where = part.providerExecuted ? 'server' : 'browser';
  const label =
    part.state === 'input-available' && where === 'browser'
      ? 'running in the browser…'
      : part.state === 'approval-responded'
        ? part.approval.approved
          ? 'approved, running…'
          : 'denied'
        : (STATE_LABELS[part.state] ?? part.state);
  return (
    <div className={`tool-card ${part.state}`} data-testid="tool-card" data-state={part.state} data-tool={name}>
      <header>
        <strong>{name}</strong>
        <span className="badge">{label}</span>
        <span className="where">{where}</span>
      </header>
      <pre className="args">{part.input === undefined ? '…' : JSON.stringify(part.input, null, 2)}</pre>
      {part.state === 'output-available' && <pre className="result">{JSON.stringify(part.output, null, 2)}</pre>}
      {part.state === 'output-error' && <pre className="failure">{part.errorText}</pre>}
      {part.state === 'approval-requested' && onDecide && (
        <div className="approval">
          <button type="button" data-testid="approve-button" onClick={() => onDecide({ id: part.approval.id, approved: true })}>
            Approve
          </button>
          <button type="button" data-testid="deny-button" onClick={() => onDecide({ id: part.approval.id, approved: false })}>
            Deny
          </button>
        </div>
      )}
      {facts?.attempts !== undefined && (
        <footer>
          {facts.attempts} attempt{facts.attempts === 1 ? '' : 's'} · {Math.round(facts.durationMs ?? 0)} ms
        </footer>
      )}
    </div>
  );
}
