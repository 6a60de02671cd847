import type { ApiDeps } from './api-deps';
import { toolPaths } from './contract/tools-contract';
import type { RouteFamily } from './route-family';
import { toolsRouter } from './tools-router';

/** `/v1/tools` (docs/API.md, "Tools"): the tools a user may use, and their direct invocation. */
export const toolsRoutes: RouteFamily<ApiDeps> = {
  stage: 'user',
  openApi: { tag: { name: 'Tools' }, paths: toolPaths },
  mount: (app, deps) => {
    app.use('/v1/tools', toolsRouter({ tools: deps.tools, userAllowedTools: deps.userAllowedTools, ...deps.toolInvocations }));
  },
};
