import * as z from 'zod/mini';
import { pageOf, timestamp } from './answer-fields.js';

/**
 * The approvals routes' answers (docs/API.md, "Tool approvals"): the server types what it sends
 * with these and documents them in GET /openapi.json; the client's methods return their types.
 */

/** `POST /v1/turns/:id/approvals`. */
export const approvalDecisionAnswerSchema = z
  .object({
    toolCallId: z.string(),
    approved: z.boolean(),
    reason: z.nullable(z.string()),
    args: z.unknown().check(z.describe("The arguments the call runs with (the edited ones, or the model's); null when denied.")),
    decidedAt: timestamp,
  })
  .check(z.meta({ id: 'ApprovalDecision', description: 'The stored decision: the first one wins; the same one again answers it.' }));
export type ApprovalDecision = z.infer<typeof approvalDecisionAnswerSchema>;

export const pendingApprovalSchema = z
  .object({
    approvalId: z.string(),
    turnId: z.string(),
    conversationId: z.string(),
    toolCallId: z.string(),
    toolName: z.string(),
    args: z.unknown(),
    requestedAt: timestamp,
    expiresAt: timestamp,
  })
  .check(z.meta({ id: 'PendingApproval' }));
export type PendingApproval = z.infer<typeof pendingApprovalSchema>;

/** `GET /v1/approvals`. */
export const pendingApprovalPageSchema = pageOf(pendingApprovalSchema).check(z.meta({ id: 'PendingApprovalPage' }));
export type PendingApprovalPage = z.infer<typeof pendingApprovalPageSchema>;
