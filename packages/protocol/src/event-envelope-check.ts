import { number, object, string } from './shape-check.js';

/**
 * What every event carries whatever its type: its conversation, turn and seq. A client passes
 * over an event it cannot read (a type or a field shape of a newer server's, docs/API.md "Events")
 * but counts its seq, or the next event would look like a gap.
 */
export const isEventEnvelope = object({ conversationId: string, turnId: string, seq: number({ integer: true, minimum: 0, exclusive: true }) }) as (
  value: unknown,
) => value is EventEnvelope;

export interface EventEnvelope {
  conversationId: string;
  turnId: string;
  seq: number;
}
