import type { TurnStatus } from '../turn-answers.js';

// What Switchyard puts on the AI SDK's UI messages beyond the SDK's own fields: the same on the
// live `/api/chat` stream and on a stored history (`GET /api/chat/:id/messages`).

/**
 * The assistant message's `metadata`: the status its turn was left in when the stream ended (or
 * the history was read), so that a UI can mark a cancelled or failed turn, also after a reload.
 */
export interface TurnMetadata {
  turnStatus: TurnStatus;
}

/**
 * A tool run as the playground's cards show it: on the tool part's `toolMetadata` (a type, not an
 * interface, so that it is the JSON object the AI SDK types that field as).
 */
export type ToolRunFacts = {
  attempts: number;
  durationMs: number;
};

export interface ToolProcessingData {
  status: 'start' | 'complete';
  step: number;
  results?: number;
  failed?: number;
}
