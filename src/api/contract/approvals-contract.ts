import { z } from 'zod';
import { approvalDecisionSchema, listApprovalsSchema } from '../request-schemas';
import { documentPaths, jsonResponse } from './operation';
import { idParams, pageOf, timestamp } from './shared-schemas';

export const approvalDecisionResponseSchema = z
  .object({
    toolCallId: z.string(),
    approved: z.boolean(),
    reason: z.string().nullable(),
    args: z.unknown().meta({ description: 'The arguments the call runs with (the edited ones, or the model\'s); null when denied.' }),
    decidedAt: timestamp,
  })
  .meta({ id: 'ApprovalDecision', description: 'The stored decision: the first one wins; the same one again answers it.' });

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
  .meta({ id: 'PendingApproval' });

export const pendingApprovalPageSchema = pageOf(pendingApprovalSchema).meta({ id: 'PendingApprovalPage' });

export const approvalPaths = documentPaths('Approvals', {
  '/v1/turns/{id}/approvals': {
    post: {
      operationId: 'decideToolApproval',
      summary: 'Approve or deny a tool call that waits for a person',
      description:
        'An approved call runs once (with `args`, when given, instead of the model\'s); a denied one never runs and the model gets `{error: {code: "denied"}}` as its result.',
      access: 'user',
      requestParams: { path: idParams('turn') },
      jsonBody: approvalDecisionSchema,
      responses: { '200': jsonResponse('The decision as stored.', approvalDecisionResponseSchema) },
      errors: ['not_found', 'already_decided'],
    },
  },
  '/v1/approvals': {
    get: {
      operationId: 'listPendingApprovals',
      summary: "The user's tool calls waiting for a decision, newest first, across conversations",
      access: 'user',
      requestParams: { query: listApprovalsSchema },
      responses: { '200': jsonResponse('A page of pending approvals.', pendingApprovalPageSchema) },
    },
  },
});
