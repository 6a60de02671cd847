import { Router } from 'express';
import { approvalDecisionAnswerSchema, approvalDecisionSchema, pendingApprovalPageSchema } from '@switchyard/protocol';
import { AppError } from '../errors/app-error';
import type { ApprovalCursor, ToolApprovalsRepository } from '../store/tool-approvals-repository';
import { decisionRefusal, type DecisionInput, type DecisionOutcome } from '../tool-calls/tool-approvals';
import { userIdOf } from './require-user';
import { listApprovalsSchema } from './request-schemas';
import { sendJson } from './send-json';
import { parseInput, parseRouteId } from './validate';

export interface ApprovalsRouterDeps {
  toolApprovals: Pick<ToolApprovalsRepository, 'listPending'>;
  decideApproval(input: DecisionInput): Promise<DecisionOutcome>;
}

/** `POST /v1/turns/:id/approvals` (a person decides a call) and `GET /v1/approvals` (what waits for one). */
export function approvalsRouter(deps: ApprovalsRouterDeps): Router {
  const router = Router();

  router.post('/turns/:id/approvals', async (req, res) => {
    const turnId = parseRouteId(req.params.id, 'turn');
    const body = parseInput(approvalDecisionSchema, req.body);
    const outcome = await deps.decideApproval({ userId: userIdOf(res), turnId, ...body });
    const refusal = decisionRefusal(outcome);
    if (refusal) {
      const details = refusal.decision ?? (refusal.field ? [{ field: refusal.field, message: refusal.message }] : undefined);
      throw new AppError(refusal.code, refusal.message, details);
    }
    if (outcome.kind === 'decided' || outcome.kind === 'repeated') sendJson(res, approvalDecisionAnswerSchema, outcome.decision);
  });

  router.get('/approvals', async (req, res) => {
    const query = parseInput(listApprovalsSchema, req.query);
    const page = await deps.toolApprovals.listPending(userIdOf(res), {
      limit: query.limit,
      ...(query.conversationId ? { conversationId: query.conversationId } : {}),
      ...(query.cursor ? { cursor: decodeCursor(query.cursor) } : {}),
    });
    sendJson(res, pendingApprovalPageSchema, {
      data: page.data.map(({ approvalId, turnId, conversationId, toolCallId, toolName, args, requestedAt, expiresAt }) => ({
        approvalId,
        turnId,
        conversationId,
        toolCallId,
        toolName,
        args,
        requestedAt,
        expiresAt,
      })),
      nextCursor: page.nextCursor ? Buffer.from(JSON.stringify(page.nextCursor)).toString('base64url') : null,
    });
  });

  return router;
}

function decodeCursor(text: string): ApprovalCursor {
  try {
    const value = JSON.parse(Buffer.from(text, 'base64url').toString('utf8')) as Partial<ApprovalCursor>;
    if (typeof value.requestedAt === 'string' && !Number.isNaN(Date.parse(value.requestedAt)) && typeof value.approvalId === 'string') {
      return { requestedAt: value.requestedAt, approvalId: value.approvalId };
    }
  } catch {
    // fall through to the error below
  }
  throw new AppError('invalid_request', 'invalid cursor', [{ field: 'cursor', message: 'not a cursor from this API' }]);
}
