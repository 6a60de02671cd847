import type { UIMessage } from 'ai';

/**
 * A turn that did not complete, as its message's metadata says: the server writes `turnStatus`
 * on the live stream's closing chunks and on the stored history alike, so one check marks both.
 */
export function TurnMark({ message }: { message: UIMessage }) {
  const status = (message.metadata as { turnStatus?: string } | undefined)?.turnStatus;
  if (message.role !== 'assistant' || (status !== 'cancelled' && status !== 'failed')) return null;
  return (
    <div className={`turn-mark ${status}`} data-testid="turn-mark" data-status={status}>
      {status === 'cancelled' ? 'Stopped' : 'Failed'}
    </div>
  );
}
