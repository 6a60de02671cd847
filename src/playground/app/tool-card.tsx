import type { DynamicToolUIPart, ToolUIPart } from 'ai';

const STATE_LABELS: Record<string, string> = {
  'input-streaming': 'arguments streaming…',
  'input-available': 'running…',
  'output-available': 'done',
  'output-error': 'failed',
};

/** One tool call: its arguments as they stream in, then its result or error, attempts and time. */
export function ToolCard({ part, name }: { part: ToolUIPart | DynamicToolUIPart; name: string }) {
  const facts = (part as { toolMetadata?: { attempts?: number; durationMs?: number } }).toolMetadata;
  const where = part.providerExecuted ? 'server' : 'browser';
  const label = part.state === 'input-available' && where === 'browser' ? 'running in the browser…' : (STATE_LABELS[part.state] ?? part.state);
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
      {facts?.attempts !== undefined && (
        <footer>
          {facts.attempts} attempt{facts.attempts === 1 ? '' : 's'} · {Math.round(facts.durationMs ?? 0)} ms
        </footer>
      )}
    </div>
  );
}
