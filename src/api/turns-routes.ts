import type { ApiDeps } from './api-deps';
import { turnPaths } from './contract/turns-contract';
import type { RouteFamily } from './route-family';
import { turnsRouter } from './turns-router';

/** `/v1/turns` (docs/API.md, "HTTP API"): a turn, its events (SSE), its cancel and its client tools' answers. */
export const turnsRoutes: RouteFamily<ApiDeps> = {
  stage: 'user',
  openApi: { tag: { name: 'Turns' }, paths: turnPaths },
  mount: (app, deps) => {
    app.use(
      '/v1/turns',
      turnsRouter({
        turns: deps.turns,
        toolCalls: deps.toolCalls,
        messages: deps.messages,
        turnService: deps.turnService,
        eventStream: deps.eventStream,
        answerClientTool: deps.answerClientTool,
        inflight: deps.inflight,
      }),
    );
  },
};
