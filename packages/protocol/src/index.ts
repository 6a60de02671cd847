/**
 * Switchyard's wire protocol: the one source the server validates, types and documents with and
 * every client (the client package, the playground) reads with.
 */
export * from './event.js';
export * from './terminal-events.js';
export * from './ws-frames.js';
export * from './server-frame-check.generated.js';
export * from './event-envelope-check.js';
// The checks the generated frame check is written with, as one namespace: their names are zod's.
export * as shapes from './shape-check.js';
export * from './answer-fields.js';
export * from './approval-answers.js';
export * from './approval-requests.js';
export * from './conversation-answers.js';
export * from './conversation-requests.js';
export * from './turn-answers.js';
export * from './turn-requests.js';
export * from './turn-content.js';
export * from './tool-choice.js';
export * from './tool-kinds.js';
export * from './model-settings.js';
export * from './ws-ticket-answer.js';
export * from './ui-messages/ui-message-parts.js';
export * from './ui-messages/stored-to-ui-messages.js';
