import { wsTicketSchema } from '../../packages/client/src/protocol/ws-ticket-answer.js';
import type { ApiDeps } from './api-deps';
import { chatRouter } from './chat-router';
import { browserPaths, sessionTokenGrantSchema } from './contract/browser-contract';
import { sessionTokenSchema } from './request-schemas';
import { principalOf } from './require-user';
import type { RouteFamily } from './route-family';
import { sendJson } from './send-json';
import { parseInput } from './validate';

/**
 * The routes a browser uses (docs/API.md, "AI SDK compatible routes"): the credentials it may
 * hold, and the AI SDK's chat transport at `/api/chat`. The websocket those credentials open is
 * documented here too; the gateway serves it, on the upgrade.
 */
export const browserRoutes: RouteFamily<ApiDeps> = {
  stage: 'user',
  openApi: { tag: { name: 'Browsers', description: 'Session tokens, websocket tickets, the websocket, and the AI SDK chat transport.' }, paths: browserPaths },
  mount: (app, deps) => {
    app.post('/v1/ws-tickets', async (_req, res) => {
      sendJson(res, wsTicketSchema, await deps.tickets.issue(principalOf(res)), 201);
    });
    app.post('/v1/session-tokens', async (req, res) => {
      const { ttlSeconds } = parseInput(sessionTokenSchema, req.body);
      sendJson(res, sessionTokenGrantSchema, await deps.sessionTokens.mint(principalOf(res), ttlSeconds ?? deps.sessionTokenTtlSeconds), 201);
    });
    app.use(
      '/api/chat',
      chatRouter({
        conversations: deps.conversations,
        messages: deps.messages,
        turns: deps.turns,
        toolCalls: deps.toolCalls,
        turnService: deps.turnService,
        answerClientTool: deps.answerClientTool,
        decideApproval: deps.decideApproval,
        toolApprovals: deps.toolApprovals,
        latestSeq: deps.latestSeq,
        uiStream: deps.uiStream,
      }),
    );
  },
};
