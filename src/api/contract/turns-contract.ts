import { z } from 'zod';
import { toolChoiceSchema } from '../../events/turn-content';
import { clientToolAnswerSchema } from '../request-schemas';
import { documentPaths, eventStreamResponse, jsonResponse } from './operation';
import { count, errorValue, idParams, timestamp, usage } from './shared-schemas';

const turnStatusSchema = z.enum(['queued', 'running', 'waiting_tools', 'waiting_approval', 'completed', 'failed', 'cancelled']).meta({ id: 'TurnStatus' });

export const turnAcceptedSchema = z.object({ turnId: z.string(), status: turnStatusSchema }).meta({ id: 'TurnAccepted' });

const turnOptions = z.object({
  model: z.string().optional(),
  tools: z.array(z.string()).optional(),
  toolChoice: toolChoiceSchema.optional(),
  requireApproval: z.array(z.string()).optional(),
  maxSteps: z.number().int().optional(),
  maxHistoryMessages: z.number().int().optional(),
  functions: z
    .array(z.object({ name: z.string(), description: z.string(), inputSchema: z.record(z.string(), z.unknown()) }))
    .optional()
    .meta({ description: 'Functions the caller runs itself (the OpenAI-compatible routes): a step that calls one ends the turn.' }),
  instructions: z.string().optional().meta({ description: "This turn's system prompt in place of the conversation's (OpenAI's `instructions`)." }),
});

const stepRecord = z.object({
  step: z.number().int(),
  finishReason: z.string(),
  callerToolCalls: z.number().int().optional().meta({ description: "Calls of the caller's own functions: the turn ended after this step." }),
  usage,
  startedAt: timestamp,
  finishedAt: timestamp,
});

/** A turn as `POST /v1/turns/:id/cancel` answers it, and the start of `GET /v1/turns/:id`. */
export const turnSchema = z
  .object({
    id: z.string(),
    conversationId: z.string(),
    status: turnStatusSchema,
    attempt: count.meta({ description: 'Every start of the turn\'s work: 1 first, +1 per worker crash, broken stream or provider retry.' }),
    providerRetries: count.meta({ description: 'Provider failures retried so far (the turn shows `queued` meanwhile).' }),
    lastError: z.object({ code: z.string(), message: z.string(), at: timestamp }).nullable().meta({ description: 'The provider failure behind the latest retry.' }),
    step: count.meta({ description: 'Completed steps.' }),
    steps: z.array(stepRecord),
    finishReason: z.string().nullable(),
    error: errorValue.nullable(),
    usage,
    options: turnOptions,
    branch: z
      .object({ kind: z.enum(['regenerate', 'edit']), fromMessageId: z.string() })
      .nullable()
      .meta({ description: 'A regenerate (answers `fromMessageId` again) or an edit (replaces it); null for other turns.' }),
    supersededBy: z.string().nullable().meta({ description: 'The edit or regenerate that replaced this turn\'s messages (it is off the conversation\'s path).' }),
    timings: z.object({ createdAt: timestamp, startedAt: timestamp.nullable(), finishedAt: timestamp.nullable() }),
  })
  .meta({ id: 'Turn' });

const turnToolCall = z.object({
  toolCallId: z.string(),
  step: z.number().int(),
  toolName: z.string(),
  kind: z.string().nullable().meta({ description: '`builtin`, `http`, `mcp` or `client`; null for a call of a tool that does not exist.' }),
  args: z.unknown().meta({ description: 'The parsed arguments; null when they were not valid.' }),
  argumentsText: z.string(),
  status: z.enum(['pending', 'running', 'awaiting_approval', 'succeeded', 'failed', 'cancelled']),
  attempts: count,
  result: z.unknown().optional(),
  error: errorValue.optional(),
  durationMs: z.number().nonnegative(),
});

export const turnDetailSchema = turnSchema
  .extend({
    toolCalls: z.array(turnToolCall),
    partialToolCalls: z
      .array(z.object({ toolCallId: z.string(), toolName: z.string(), argumentsText: z.string() }))
      .meta({ description: "The running step's tool calls still streaming, their arguments so far." }),
  })
  .meta({ id: 'TurnDetail' });

export const clientToolAnswerAckSchema = z
  .object({ accepted: z.boolean(), reason: z.literal('already_answered').optional() })
  .meta({ id: 'ClientToolAnswerAck', description: 'The first answer wins; later ones are acknowledged and ignored.' });

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
      description: 'Each `data:` is an `Event` (components.schemas.Event), its `id:` the event\'s seq; the stream ends after the turn\'s last event.',
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
