/**
 * The event model is the protocol's (@switchyard/protocol), the one source the server and every
 * client check events with; the server's modules import it from here.
 */
export { eventSchema, TERMINAL_EVENT_TYPES } from '@switchyard/protocol';
export type { EventBody, EventPayload, EventType, SwitchyardEvent, Usage } from '@switchyard/protocol';
