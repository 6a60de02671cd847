import * as z from 'zod/mini';
import { toolNameSchema } from './tool-choice.js';

/**
 * The bodies the conversations routes take (docs/API.md, "Conversations"): the server validates
 * them with these and documents them in GET /openapi.json; the client's methods take their types,
 * so an option the server would refuse does not compile.
 */

/** A message's public id (`msg_<n>`), as `GET /v1/conversations/:id` lists it. */
export const messageIdSchema = z.string().check(z.minLength(1), z.maxLength(100));

/** `POST /v1/conversations`. */
export const createConversationSchema = z.strictObject({
  title: z.optional(z.string().check(z.maxLength(500))),
  system: z.optional(z.string().check(z.maxLength(200_000))),
  model: z.optional(z.string().check(z.minLength(1), z.maxLength(200))),
  tools: z.optional(z.array(toolNameSchema).check(z.maxLength(128))),
  requireApproval: z.optional(z.array(toolNameSchema).check(z.maxLength(128))),
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
