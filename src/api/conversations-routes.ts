import type { ApiDeps } from './api-deps';
import { conversationPaths } from './contract/conversations-contract';
import { conversationsRouter } from './conversations-router';
import type { RouteFamily } from './route-family';

/** `/v1/conversations` (docs/API.md, "HTTP API"): conversations, their turns, edits, regenerations and forks. */
export const conversationsRoutes: RouteFamily<ApiDeps> = {
  stage: 'user',
  openApi: { tag: { name: 'Conversations' }, paths: conversationPaths },
  mount: (app, deps) => {
    app.use(
      '/v1/conversations',
      conversationsRouter({
        conversations: deps.conversations,
        messages: deps.messages,
        turnService: deps.turnService,
        usableTools: { tools: deps.tools, userAllowedTools: deps.userAllowedTools },
        latestSeq: deps.latestSeq,
      }),
    );
  },
};
