import * as z from 'zod/mini';
import { modelSettingsSchema, responseFormatSchema } from './model-settings.js';
import { toolNameSchema } from './tool-choice.js';

/**
 * The bodies the conversations routes take (docs/API.md, "Conversations"): the server validates
 * them with these and documents them in GET /openapi.json; the client's methods take their types,
 * so an option the server would refuse does not compile.
 */

/** A message's public id (`msg_<n>`), as `GET /v1/conversations/:id` lists it. */
export const messageIdSchema = z.string().check(z.minLength(1), z.maxLength(100));

/**
 * A conversation's compaction policy (docs/API.md, "Long conversations"): past the trigger, the
 * messages before a kept tail are summarised. `triggerTokens` or `triggerFraction` (of the
 * model's `contextWindow`), not both.
 */
export const compactionPolicySchema = z
  .strictObject({
    triggerTokens: z.optional(z.int().check(z.gte(64), z.lte(100_000_000))),
    triggerFraction: z.optional(z.number().check(z.gt(0), z.lte(1))),
    keepRecentTokens: z.optional(z.int().check(z.gte(0), z.lte(100_000_000))),
    instructions: z.optional(z.string().check(z.minLength(1), z.maxLength(20_000))),
    model: z.optional(z.string().check(z.minLength(1), z.maxLength(200))),
  })
  .check(
    z.refine((policy) => policy.triggerTokens === undefined || policy.triggerFraction === undefined, {
      message: 'give triggerTokens or triggerFraction, not both',
      path: ['triggerTokens'],
    }),
  );
export type CompactionPolicy = z.infer<typeof compactionPolicySchema>;

/** `POST /v1/conversations/:id/compact`: compacts now, as a turn of its own. */
export const compactConversationSchema = z.strictObject({ instructions: z.optional(z.string().check(z.minLength(1), z.maxLength(20_000))) });
export type CompactConversationRequest = z.input<typeof compactConversationSchema>;

/** `POST /v1/conversations`. */
export const createConversationSchema = z.strictObject({
  title: z.optional(z.string().check(z.maxLength(500))),
  system: z.optional(z.string().check(z.maxLength(200_000))),
  model: z.optional(z.string().check(z.minLength(1), z.maxLength(200))),
  tools: z.optional(z.array(toolNameSchema).check(z.maxLength(128))),
  requireApproval: z.optional(z.array(toolNameSchema).check(z.maxLength(128))),
  compaction: z.optional(compactionPolicySchema),
  modelSettings: z.optional(modelSettingsSchema),
  responseFormat: z.optional(responseFormatSchema),
  metadata: z.optional(z.record(z.string(), z.unknown())),
  agent: z
    .optional(z.string().check(z.minLength(1), z.maxLength(120)))
    .check(z.describe('An agent (`agent_…` or its name): its latest version at each turn, or `@N` pinned (`agent_…@3`).')),
  externalId: z.optional(z.string().check(z.minLength(1), z.maxLength(200))),
});
export type CreateConversationRequest = z.input<typeof createConversationSchema>;

/** `POST /v1/conversations/:id/fork`: the copy holds the path up to this message. */
export const forkConversationSchema = z.strictObject({ messageId: messageIdSchema });
export type ForkConversationRequest = z.input<typeof forkConversationSchema>;
