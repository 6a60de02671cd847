import { z } from 'zod';
import { TURN_STATUSES, wsTicketSchema } from '@switchyard/protocol';
import { chatRequestSchema } from '../../ui-chat/chat-request';
import { chatParamsSchema, sessionTokenSchema } from '../request-schemas';
import { documentPaths, eventStreamResponse, jsonResponse } from './operation';
import { timestamp } from './shared-schemas';

// The routes a browser uses: credentials it may hold, the websocket, and the AI SDK's chat transport.

export const sessionTokenGrantSchema = z
  .object({ token: z.string(), expiresAt: timestamp })
  .meta({ id: 'SessionToken', description: 'A bearer token for browsers, dying with the key that minted it.' });

const uiMessageStream = eventStreamResponse(
  "The AI SDK's UI message stream (header `x-vercel-ai-ui-message-stream: v1`): `data:` chunks `start` (its `messageId` is the turn id), text, reasoning and tool parts, `data-tool-processing`, `finish`, then `[DONE]`.",
);

const uiMessagePartSchema = z.looseObject({ type: z.string() }).meta({
  description:
    'A part as the AI SDK 6 types it: `step-start`, `reasoning` (what a cancelled step had streamed), `text`, `file`, `tool-<name>` (with `toolCallId`, `state`, `input`, `output` or `errorText`; server-run ones `providerExecuted: true` and `toolMetadata: {attempts, durationMs}`; a call that needs approval carries `approval: {id, approved?, reason?}` and is in state `approval-requested`, `approval-responded` or `output-denied` until it has an output), `data-tool-processing`.',
});

export const uiMessagesSchema = z
  .array(
    z.object({
      id: z.string().meta({ description: "A user message's is `<turnId>:user`; an assistant message's is its turn's id." }),
      role: z.enum(['user', 'assistant']),
      metadata: z.object({ turnStatus: z.enum(TURN_STATUSES) }).optional(),
      parts: z.array(uiMessagePartSchema),
    }),
  )
  .meta({ id: 'UiMessages', description: "A chat's stored history as the AI SDK's `UIMessage[]`, in the shape the live stream builds." });

export const browserPaths = documentPaths('Browsers', {
  '/v1/session-tokens': {
    post: {
      operationId: 'createSessionToken',
      summary: 'Mint a session token for a browser',
      access: 'user',
      jsonBody: sessionTokenSchema,
      responses: { '201': jsonResponse('The token.', sessionTokenGrantSchema) },
    },
  },
  '/v1/ws-tickets': {
    post: {
      operationId: 'createWsTicket',
      summary: 'A single-use ticket for the websocket (browsers cannot set its headers)',
      access: 'user',
      responses: { '201': jsonResponse('The ticket.', wsTicketSchema) },
    },
  },
  '/v1/ws': {
    get: {
      operationId: 'openWebsocket',
      summary: 'The websocket gateway',
      description:
        'Upgrades to a websocket. Frames both ways are JSON text: the client sends `ClientFrame`s, the server `ServerFrame`s (components.schemas); every `Event` arrives as `{type: "event", event}`, in seq order, with no gap and no duplicate.',
      access: 'user',
      requestParams: { query: z.object({ ticket: z.string().optional().meta({ description: 'From `POST /v1/ws-tickets`, instead of the Authorization header.' }) }) },
      responses: { '101': { description: 'Switching to the websocket protocol.' } },
    },
  },
  '/api/chat': {
    post: {
      operationId: 'chat',
      summary: "The AI SDK's chat transport: send a message, answer client tools or decide approvals",
      description:
        "The chat id is the conversation's `externalId`. Stored history wins: only the last message is read (a new user message, or the assistant message whose tool parts answer client tools or, in state `approval-responded`, decide calls awaiting approval).",
      access: 'user',
      jsonBody: chatRequestSchema,
      responses: { '200': uiMessageStream },
      errors: ['conversation_busy', 'idempotency_conflict'],
    },
  },
  '/api/chat/{id}/messages': {
    get: {
      operationId: 'chatHistory',
      summary: "The chat's stored history, for `useChat`'s `messages`",
      description: 'One assistant message per turn, its metadata the turn status. A chat id not used yet answers `[]`.',
      access: 'user',
      requestParams: { path: chatParamsSchema },
      responses: { '200': jsonResponse('The history, oldest first.', uiMessagesSchema) },
    },
  },
  '/api/chat/{id}/stream': {
    get: {
      operationId: 'resumeChatStream',
      summary: "Resume the chat's active turn",
      access: 'user',
      requestParams: { path: chatParamsSchema },
      responses: { '200': uiMessageStream, '204': { description: 'No turn is active on this chat.' } },
    },
  },
});
