import { shapes, type ConversationMessage, type TurnDetail, type TurnToolCall } from '@switchyard/protocol';
import type { ToolCallRequest } from './conversation-feed.js';

/** The part of `GET /v1/turns/:id` that says which client-tool calls wait for an answer. */
export interface TurnToolCalls extends Pick<TurnDetail, 'id' | 'conversationId'> {
  toolCalls: Pick<TurnToolCall, 'toolCallId' | 'toolName' | 'kind' | 'status' | 'args'>[];
}
/** A turn read back after a reload is checked for the few fields the client acts on (the rest it only passes along). */
export const isTurnToolCalls = shapes.object({
  id: shapes.string,
  conversationId: shapes.string,
  toolCalls: shapes.array(shapes.object({ toolCallId: shapes.string, toolName: shapes.string, kind: shapes.nullable(shapes.string), status: shapes.string, args: shapes.unknown })),
}) as (value: unknown) => value is TurnToolCalls;

const SETTLED = new Set(['succeeded', 'failed', 'cancelled']);

/**
 * The turns a reload looks at for unanswered client-tool calls: those of the requests seen
 * before it, and the conversation's latest turn (the one a request among the skipped events
 * would belong to; its messages are the reloaded conversation's last ones).
 */
export function turnsToCheck(known: ToolCallRequest[], messages: Pick<ConversationMessage, 'turnId'>[]): string[] {
  const turnIds = new Set(known.map((request) => request.turnId));
  const last = messages[messages.length - 1];
  if (last?.turnId) turnIds.add(last.turnId);
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
