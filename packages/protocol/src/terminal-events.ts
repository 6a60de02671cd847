import type { EventType } from './event.js';

/**
 * The events that end a turn. A module apart from the schemas, so that a client using it does
 * not bundle zod.
 */
export const TERMINAL_EVENT_TYPES: ReadonlySet<EventType> = new Set(['turn-finish', 'turn-error', 'turn-cancelled']);
