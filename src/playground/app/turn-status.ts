import type { UIMessage, UIMessageChunk } from 'ai';

/** What an assistant message's `metadata` says of its turn; the stored history carries it too. */
interface TurnMetadata {
  turnStatus?: string;
}

/** A turn that was cancelled (Stop, or an interrupt): its message gets a mark, live or reloaded. */
export function isCancelledTurn(message: UIMessage): boolean {
  return message.role === 'assistant' && (message.metadata as TurnMetadata | undefined)?.turnStatus === 'cancelled';
}

/**
 * A live stream tells of a cancelled turn only by its closing `abort` chunk, which `useChat`
 * keeps nowhere: this writes it onto the message as the metadata a reloaded history has, so
 * that one check marks both.
 */
export function markCancelledTurns(): TransformStream<UIMessageChunk, UIMessageChunk> {
  return new TransformStream({
    transform(chunk, controller) {
      if (chunk.type === 'abort') controller.enqueue({ type: 'message-metadata', messageMetadata: { turnStatus: 'cancelled' } satisfies TurnMetadata });
      controller.enqueue(chunk);
    },
  });
}
