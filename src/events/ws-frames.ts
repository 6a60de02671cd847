/**
 * The websocket frames live in the client package, the one source the gateway and every client
 * check frames with; the server's modules import them from here.
 */
export * from '../../packages/client/src/protocol/ws-frames.js';
