import { approvalsRouter, type ApprovalsRouterDeps } from './approvals-router';
import { approvalPaths } from './contract/approvals-contract';
import type { RouteFamily } from './route-family';

/** `POST /v1/turns/:id/approvals` and `GET /v1/approvals` (docs/API.md, "Tool approvals"). */
export const approvalsRoutes: RouteFamily<ApprovalsRouterDeps> = {
  stage: 'user',
  openApi: { tag: { name: 'Approvals', description: 'A person approves a tool call before it runs.' }, paths: approvalPaths },
  mount: (app, needs) => {
    app.use('/v1', approvalsRouter({ toolApprovals: needs.toolApprovals, decideApproval: needs.decideApproval }));
  },
};
