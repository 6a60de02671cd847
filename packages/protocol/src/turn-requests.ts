import * as z from 'zod/mini';
import { messageIdSchema } from './conversation-requests.js';
import { modelSettingsSchema, responseFormatSchema } from './model-settings.js';
import { toolChoiceSchema, toolNameSchema } from './tool-choice.js';
import { turnContentSchema } from './turn-content.js';

/**
 * The bodies the turns routes take (docs/API.md, "Turns"): the server validates them with these
 * and documents them in GET /openapi.json; the client's methods take their types, so an option
 * the server would refuse does not compile.
 */

/** `POST /v1/conversations/:id/turns` (a turn, a regenerate, an edit). */
export const createTurnSchema = z
  .strictObject({
    content: z.optional(turnContentSchema).check(z.describe('The user message; with `fromMessageId`, it replaces that message (an edit). Absent with `regenerate`.')),
    regenerate: z.optional(z.boolean()).check(z.describe('Answer again the last user message (or `fromMessageId`), superseding what followed it.')),
    fromMessageId: z.optional(messageIdSchema).check(z.describe('A user message on the path: the one a regenerate answers again, or an edit replaces.')),
    idempotencyKey: z.optional(z.string().check(z.minLength(1), z.maxLength(200))),
    model: z.optional(z.string().check(z.minLength(1), z.maxLength(200))),
    tools: z.optional(z.array(toolNameSchema).check(z.maxLength(128))),
    toolChoice: z.optional(toolChoiceSchema),
    requireApproval: z.optional(z.array(toolNameSchema).check(z.maxLength(128))),
    maxSteps: z.optional(z.int().check(z.gte(1), z.lte(100))),
    maxHistoryMessages: z.optional(z.int().check(z.gte(1), z.lte(100_000))),
    modelSettings: z.optional(modelSettingsSchema).check(z.describe("Sent with every step's request; over the conversation's, field by field.")),
    responseFormat: z.optional(responseFormatSchema).check(z.describe("Structured output, in place of the conversation's.")),
    agent: z
      .optional(z.string().check(z.minLength(1), z.maxLength(120)))
      .check(z.describe("This turn's agent in place of the conversation's: `agent_…` or its name, `@N` to pin a version.")),
    onBusy: z._default(z.enum(['reject', 'enqueue', 'interrupt']), 'reject'),
  })
  .check(
    z.superRefine((body, context) => {
      if (body.regenerate && body.content !== undefined) {
        context.addIssue({
          code: 'custom',
          path: ['content'],
          message: 'a regenerate answers a stored message again: leave content out (to change the message, post content with fromMessageId)',
        });
      }
      if (!body.regenerate && body.content === undefined) context.addIssue({ code: 'custom', path: ['content'], message: 'required (or regenerate: true)' });
    }),
  );
/** The body as sent: `onBusy` may be left out (`reject`). */
export type TurnRequest = z.input<typeof createTurnSchema>;

const toolCallId = z.string().check(z.minLength(1), z.maxLength(200));
const toolError = z.looseObject({ code: z.string().check(z.minLength(1), z.maxLength(100)), message: z.string().check(z.maxLength(10_000)) });

/** A client tool's result, or its error, for one call (the websocket's `tool-result` frame carries either too). */
export const clientToolResultFields = { toolCallId, result: z.unknown() };
export const clientToolErrorFields = { toolCallId, error: toolError };

/** `POST /v1/turns/:id/tool-results`: a client tool's answer, its result or its error. */
export const clientToolAnswerSchema = z.union([z.strictObject(clientToolResultFields), z.strictObject(clientToolErrorFields)]);
export type ClientToolAnswerRequest = z.input<typeof clientToolAnswerSchema>;
