import { adminRouter, type AdminRouterDeps } from './admin-router';
import { adminPaths } from './contract/admin-contract';
import type { RouteFamily } from './route-family';

/** `/v1/admin` (docs/API.md, "Users and auth"): users, their keys (made, listed, revoked) and the tools they may use. */
export const adminRoutes: RouteFamily<AdminRouterDeps> = {
  stage: 'admin',
  openApi: { tag: { name: 'Admin', description: 'Answers 404 while ADMIN_TOKEN is unset.' }, paths: adminPaths },
  mount: (app, needs) => {
    app.use('/v1/admin', adminRouter({ users: needs.users, tools: needs.tools, afterRevocation: needs.afterRevocation }));
  },
};
