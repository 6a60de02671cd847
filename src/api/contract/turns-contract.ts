import { z } from 'zod';
import { clientToolAnswerAckSchema, clientToolAnswerSchema, turnDetailSchema, turnSchema } from '@switchyard/protocol';
import { documentPaths, eventStreamResponse, jsonResponse } from './operation';
import { idParams } from './shared-schemas';

// The answers, and the bodies the client sends, are the protocol's (@switchyard/protocol), the one source the routes and the client are typed with.

export const turnPaths = documentPaths('Turns', {
  '/v1/turns/{id}': {
    get: {
      operationId: 'getTurn',
      summary: "A turn's status, steps, tool calls, partial tool calls, usage and timings",
      access: 'user',
      requestParams: { path: idParams('turn') },
      responses: { '200': jsonResponse('The turn.', turnDetailSchema) },
      errors: ['not_found'],
    },
  },
  '/v1/turns/{id}/cancel': {
    post: {
      operationId: 'cancelTurn',
      summary: 'Cancel a turn: its provider stream is aborted, its tool jobs cancelled',
      access: 'user',
      requestParams: { path: idParams('turn') },
      responses: { '200': jsonResponse('The turn as it is now.', turnSchema) },
      errors: ['not_found'],
    },
  },
  '/v1/turns/{id}/events': {
    get: {
      operationId: 'streamTurnEvents',
      summary: "The turn's events as server-sent events",
      description: "Each `data:` is an `Event` (components.schemas.Event), its `id:` the event's seq; the stream ends after the turn's last event.",
      access: 'user',
      requestParams: {
        path: idParams('turn'),
        header: z.object({ 'Last-Event-ID': z.string().optional().meta({ description: 'Resume after this seq.' }) }),
      },
      responses: {
        '200': eventStreamResponse(
          'Events from the start, or after `Last-Event-ID`. One the log cannot serve ends the stream with `event: error` and `{code: "bad_cursor"}` or `{code: "cursor_expired", oldestSeq}`.',
        ),
      },
      errors: ['not_found'],
    },
  },
  '/v1/turns/{id}/tool-results': {
    post: {
      operationId: 'answerClientTool',
      summary: 'Answer a client-executed tool call',
      access: 'user',
      requestParams: { path: idParams('turn') },
      jsonBody: clientToolAnswerSchema,
      responses: { '200': jsonResponse('Whether this answer was the one taken.', clientToolAnswerAckSchema) },
      errors: ['not_found'],
    },
  },
});
