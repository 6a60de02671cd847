import { z } from 'zod';
import type { ToolCallRequest } from './conversation-feed';

/** The part of `GET /v1/turns/:id` that says which client-tool calls wait for an answer. */
export const turnToolCallsSchema = z.object({
  id: z.string(),
  conversationId: z.string(),
  toolCalls: z.array(z.object({ toolCallId: z.string(), toolName: z.string(), kind: z.string().nullable(), status: z.string(), args: z.unknown() })),
});
export type TurnToolCalls = z.infer<typeof turnToolCallsSchema>;

const SETTLED = new Set(['succeeded', 'failed', 'cancelled']);

/**
 * The turns a reload looks at for unanswered client-tool calls: those of the requests seen
 * before it, and the conversation's latest turn (the one a request among the skipped events
 * would belong to; its messages are the reloaded conversation's last ones).
 */
export function turnsToCheck(known: ToolCallRequest[], messages: unknown[]): string[] {
  const turnIds = new Set(known.map((request) => request.turnId));
  const last = z.object({ turnId: z.string() }).safeParse(messages[messages.length - 1]);
  if (last.success) turnIds.add(last.data.turnId);
  return [...turnIds];
}

/**
 * The client-tool calls of these turns still without an answer, as requests: one seen before
 * keeps its event, one never seen (its request was among the skipped events) is made from the
 * turn, at `seq` (where the reloaded conversation stands). Pure.
 */
export function openClientCalls(turns: TurnToolCalls[], known: ToolCallRequest[], seq: number): ToolCallRequest[] {
  return turns.flatMap((turn) =>
    turn.toolCalls
      .filter((call) => call.kind === 'client' && !SETTLED.has(call.status))
      .map(
        (call): ToolCallRequest =>
          known.find((request) => request.turnId === turn.id && request.toolCallId === call.toolCallId) ?? {
            type: 'tool-call-request',
            seq,
            conversationId: turn.conversationId,
            turnId: turn.id,
            toolCallId: call.toolCallId,
            toolName: call.toolName,
            args: call.args,
          },
      ),
  );
}
