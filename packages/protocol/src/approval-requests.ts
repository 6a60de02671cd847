import * as z from 'zod/mini';

/**
 * The body the approvals route takes (docs/API.md, "Tool approvals"): the server validates it
 * with this and documents it in GET /openapi.json; the client's `approve` takes its type.
 */

/** `POST /v1/turns/:id/approvals`: a person's decision on a call that waits; `args` replaces the model's arguments. */
export const approvalDecisionSchema = z.strictObject({
  toolCallId: z.string().check(z.minLength(1), z.maxLength(200)),
  approved: z.boolean(),
  reason: z.optional(z.string().check(z.maxLength(10_000))),
  args: z.optional(z.record(z.string(), z.unknown())),
});
export type ApprovalDecisionRequest = z.input<typeof approvalDecisionSchema>;
