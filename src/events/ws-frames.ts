import * as z from 'zod/mini';

// zod/mini loads no wording of its own, and the gateway's refusals quote zod's (English) messages.
z.config(z.locales.en());

/**
 * The websocket frames live in the client package, the one source the gateway and every client
 * check frames with; the server's modules import them from here.
 */
export * from '../../packages/client/src/protocol/ws-frames.js';
