import type { Queryable } from '../store/db';
import type { MessagesRepository } from '../store/messages-repository';
import type { ToolCallsRepository } from '../store/tool-calls-repository';

/**
 * Leaves a turn that ends early (cancelled, interrupted, failed, out of steps) with a history
 * every provider accepts: each assistant tool call gets its tool message, a synthetic
 * `cancelled` result where no real one exists. Run inside the transaction that ends the turn.
 */
export async function repairTranscript(
  deps: { toolCalls: ToolCallsRepository; messages: MessagesRepository },
  turnId: string,
  reason: { code: string; message: string },
  tx: Queryable,
): Promise<void> {
  await deps.toolCalls.cancelUnsettled(turnId, reason, tx);
  await deps.messages.insertToolMessages({ turnId }, tx);
}
