import { adminRouter } from './admin-router';
import type { ApiDeps } from './api-deps';
import { adminPaths } from './contract/admin-contract';
import type { RouteFamily } from './route-family';

/** `/v1/admin` (docs/API.md, "Users and auth"): users, their keys and the tools they may use. */
export const adminRoutes: RouteFamily<ApiDeps> = {
  stage: 'admin',
  openApi: { tag: { name: 'Admin', description: 'Answers 404 while ADMIN_TOKEN is unset.' }, paths: adminPaths },
  mount: (app, deps) => {
    app.use('/v1/admin', adminRouter({ users: deps.users, tools: deps.tools }));
  },
};
