import { approvalDecisionAnswerSchema, approvalDecisionSchema, pendingApprovalPageSchema } from '@switchyard/protocol';
import { listApprovalsSchema } from '../request-schemas';
import { documentPaths, jsonResponse } from './operation';
import { idParams } from './shared-schemas';

// The answers, and the bodies the client sends, are the protocol's (@switchyard/protocol), the one source the routes and the client are typed with.

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
      responses: { '200': jsonResponse('The decision as stored.', approvalDecisionAnswerSchema) },
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
