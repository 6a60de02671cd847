import * as z from 'zod/mini';
import { count, errorValue, timestamp, usage } from './answer-fields.js';
import { modelSettingsSchema, responseFormatSchema } from './model-settings.js';
import { toolChoiceSchema } from './tool-choice.js';
import { toolKindsInWords } from './tool-kinds.js';

/**
 * The turns routes' answers (docs/API.md, "Turns"): the server types what it sends with these
 * and documents them in GET /openapi.json; the client's methods return their types.
 */

/**
 * A turn's status as every answer shows it (`waiting_approval`: waiting on a person's decision;
 * `waiting_budget`: parked by a `pause` budget until it is raised or its period resets).
 */
export const TURN_STATUSES = ['queued', 'running', 'waiting_tools', 'waiting_approval', 'waiting_budget', 'completed', 'failed', 'cancelled'] as const;
export type TurnStatus = (typeof TURN_STATUSES)[number];
export const turnStatusSchema = z.enum(TURN_STATUSES).check(z.meta({ id: 'TurnStatus' }));

/** `POST /v1/conversations/:id/turns` (a turn, a regenerate, an edit). */
export const turnAcceptedSchema = z.object({ turnId: z.string(), status: turnStatusSchema }).check(z.meta({ id: 'TurnAccepted' }));
export type TurnAccepted = z.infer<typeof turnAcceptedSchema>;

const turnOptions = z.object({
  model: z.optional(z.string()),
  tools: z.optional(z.array(z.string())),
  toolChoice: z.optional(toolChoiceSchema),
  requireApproval: z.optional(z.array(z.string())),
  maxSteps: z.optional(z.int()),
  maxHistoryMessages: z.optional(z.int()),
  functions: z
    .optional(z.array(z.object({ name: z.string(), description: z.string(), inputSchema: z.record(z.string(), z.unknown()) })))
    .check(z.describe('Functions the caller runs itself (the OpenAI-compatible routes): a step that calls one ends the turn.')),
  instructions: z.optional(z.string()).check(z.describe("This turn's system prompt in place of the conversation's (OpenAI's `instructions`).")),
  modelSettings: z.optional(modelSettingsSchema),
  responseFormat: z.optional(responseFormatSchema),
});

const stepRecord = z.object({
  step: z.int(),
  finishReason: z.string(),
  callerToolCalls: z.optional(z.int()).check(z.describe("Calls of the caller's own functions: the turn ended after this step.")),
  usage,
  startedAt: timestamp,
  finishedAt: timestamp,
});

// The fields of both answers below: an object with a check (its name) cannot be extended.
const turnFields = {
  id: z.string(),
  conversationId: z.string(),
  status: turnStatusSchema,
  attempt: count.check(z.describe("Every start of the turn's work: 1 first, +1 per worker crash, broken stream or provider retry.")),
  providerRetries: count.check(z.describe('Provider failures retried so far (the turn shows `queued` meanwhile).')),
  lastError: z.nullable(z.object({ code: z.string(), message: z.string(), at: timestamp })).check(z.describe('The provider failure behind the latest retry.')),
  step: count.check(z.describe('Completed steps.')),
  steps: z.array(stepRecord),
  finishReason: z.nullable(z.string()),
  error: z.nullable(errorValue),
  usage,
  options: turnOptions,
  agentId: z.nullable(z.string()).check(z.describe("The agent the turn runs on (its own, else its conversation's); null without one.")),
  agentVersion: z.nullable(z.int()).check(z.describe("That agent's version, resolved when the turn was admitted and kept through its restarts.")),
  branch: z
    .nullable(z.object({ kind: z.enum(['regenerate', 'edit']), fromMessageId: z.string() }))
    .check(z.describe('A regenerate (answers `fromMessageId` again) or an edit (replaces it); null for other turns.')),
  supersededBy: z.nullable(z.string()).check(z.describe("The edit or regenerate that replaced this turn's messages (it is off the conversation's path).")),
  timings: z.object({ createdAt: timestamp, startedAt: z.nullable(timestamp), finishedAt: z.nullable(timestamp) }),
  output: z.optional(z.unknown()).check(z.describe('With a responseFormat: the final answer, parsed and validated (absent until the turn completes, and on a turn without one).')),
};

/** A turn as `POST /v1/turns/:id/cancel` answers it, and the start of `GET /v1/turns/:id`. */
export const turnSchema = z.object(turnFields).check(z.meta({ id: 'Turn' }));
export type Turn = z.infer<typeof turnSchema>;

/** A tool call's status as a turn's answer and its history show it. */
export const TOOL_CALL_STATUSES = ['pending', 'running', 'awaiting_approval', 'succeeded', 'failed', 'cancelled'] as const;
export type ToolCallStatus = (typeof TOOL_CALL_STATUSES)[number];

const turnToolCall = z.object({
  toolCallId: z.string(),
  step: z.int(),
  toolName: z.string(),
  kind: z.nullable(z.string()).check(z.describe(`${toolKindsInWords}; null for a call of a tool that does not exist.`)),
  args: z.unknown().check(z.describe('The parsed arguments; null when they were not valid.')),
  argumentsText: z.string(),
  status: z.enum(TOOL_CALL_STATUSES),
  attempts: count,
  result: z.optional(z.unknown()),
  error: z.optional(errorValue),
  durationMs: z.number().check(z.nonnegative()),
});

/** `GET /v1/turns/:id`: the turn with its tool calls, and those of the running step still streaming. */
export const turnDetailSchema = z
  .object({
    ...turnFields,
    toolCalls: z.array(turnToolCall),
    providerCalls: z
      .array(
        z.object({
          id: z.string(),
          kind: z.enum(['step', 'compaction', 'repair']),
          step: z.int(),
          attempt: z.int(),
          provider: z.string(),
          model: z.string().check(z.describe("The model's name at the provider.")),
          startedAt: timestamp,
          endedAt: timestamp,
          outcome: z.enum(['ok', 'failed', 'discarded']),
          error: z.optional(errorValue),
          usage: z.optional(usage),
          costUsd: z.number().check(z.describe("Its cost from the models file's prices; 0 when unpriced.")),
          estimated: z.boolean().check(z.describe('Its usage never arrived (a cut stream, a dead worker): counted with a tokenizer.')),
        }),
      )
      .check(
        z.describe(
          'Every request the turn sent a provider, in order, each with its own id: a fallback within an attempt is a new entry. `failed`: it failed before any output; `discarded`: its output was dropped (the stream broke; the step started again).',
        ),
      ),
    partialToolCalls: z
      .array(z.object({ toolCallId: z.string(), toolName: z.string(), argumentsText: z.string() }))
      .check(z.describe("The running step's tool calls still streaming, their arguments so far.")),
    incompleteMessage: z
      .nullable(z.object({ id: z.string(), step: z.int(), content: z.nullable(z.string()), reasoning: z.nullable(z.string()) }))
      .check(
        z.describe(
          "What the step running when the turn was cancelled or interrupted had streamed, kept as the turn's last assistant message (`incomplete: true` in the conversation); null otherwise.",
        ),
      ),
  })
  .check(z.meta({ id: 'TurnDetail' }));
export type TurnDetail = z.infer<typeof turnDetailSchema>;
export type TurnToolCall = TurnDetail['toolCalls'][number];

/** `POST /v1/turns/:id/tool-results`. */
export const clientToolAnswerAckSchema = z
  .object({ accepted: z.boolean(), reason: z.optional(z.literal('already_answered')) })
  .check(z.meta({ id: 'ClientToolAnswerAck', description: 'The first answer wins; later ones are acknowledged and ignored.' }));
export type ClientToolAnswerAck = z.infer<typeof clientToolAnswerAckSchema>;
