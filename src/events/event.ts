/**
 * The event model lives in the client package, the one source the server and every client
 * check events with; the server's modules import it from here.
 */
export * from '../../packages/client/src/protocol/event.js';
export * from '../../packages/client/src/protocol/terminal-events.js';
