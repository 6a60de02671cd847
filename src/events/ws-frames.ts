import * as z from 'zod/mini';

// zod/mini loads no wording of its own, and the gateway's refusals quote zod's (English) messages.
z.config(z.locales.en());

/**
 * The websocket frames are the protocol's (@switchyard/protocol), the one source the gateway and
 * every client check frames with; the server's modules import them from here.
 */
export { clientFrameSchemaFor, clientFrameSchemas, serverFrameSchema } from '@switchyard/protocol';
export type { ClientFrame, ClientFrameType, FrameErrorCode, ServerFrame, ToolApprovalFrame, ToolResultFrame } from '@switchyard/protocol';
