import type { ToolInvocationDeps } from '../tool-calls/tool-invocations';
import type { ToolRegistry } from '../tools/tool';
import { toolPaths } from './contract/tools-contract';
import type { RouteFamily } from './route-family';
import { toolsRouter } from './tools-router';
import { usableToolsOf, type UserToolsNeeds } from './usable-tools';

interface ToolsRoutesNeeds extends ToolInvocationDeps, UserToolsNeeds {
  tools: ToolRegistry;
}

/** `/v1/tools` (docs/API.md, "Tools"): the tools a user may use, and their direct invocation. */
export const toolsRoutes: RouteFamily<ToolsRoutesNeeds> = {
  stage: 'user',
  openApi: { tag: { name: 'Tools' }, paths: toolPaths },
  mount: (app, needs) => {
    const { userAllowedTools } = usableToolsOf(needs);
    const { tools, invocations, toolQueue, toolEvents } = needs;
    app.use('/v1/tools', toolsRouter({ tools, userAllowedTools, invocations, toolQueue, toolEvents }));
  },
};
