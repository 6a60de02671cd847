import type { ApiDeps } from './api-deps';
import { approvalsRouter } from './approvals-router';
import { approvalPaths } from './contract/approvals-contract';
import type { RouteFamily } from './route-family';

/** `POST /v1/turns/:id/approvals` and `GET /v1/approvals` (docs/API.md, "Tool approvals"). */
export const approvalsRoutes: RouteFamily<ApiDeps> = {
  stage: 'user',
  openApi: { tag: { name: 'Approvals', description: 'A person approves a tool call before it runs.' }, paths: approvalPaths },
  mount: (app, deps) => {
    app.use('/v1', approvalsRouter({ toolApprovals: deps.toolApprovals, decideApproval: deps.decideApproval }));
  },
};
