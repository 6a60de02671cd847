import { wsTicketSchema } from '@switchyard/protocol';
import type { SessionTokens } from '../auth/session-tokens';
import type { WsTickets } from '../auth/ws-tickets';
import type { Config } from '../config/config';
import type { EventLog } from '../event-log/event-log';
import type { ToolRegistry } from '../tools/tool';
import { chatRouter, type ChatRouterDeps } from './chat-router';
import { browserPaths, sessionTokenGrantSchema } from './contract/browser-contract';
import type { LiveSseOptions } from './live-sse';
import { sessionTokenSchema } from './request-schemas';
import { principalOf } from './require-user';
import type { RouteFamily } from './route-family';
import { sendJson } from './send-json';
import type { ConversationEventSource } from './turn-event-stream';
import { createUiMessageStreamer } from './ui-message-stream';
import { parseInput } from './validate';

interface BrowserRoutesNeeds extends Omit<ChatRouterDeps, 'latestSeq' | 'uiStream'> {
  /** SESSION_TOKEN_TTL_SECONDS: a session token's lifetime when the request names none. */
  config: Pick<Config, 'SESSION_TOKEN_TTL_SECONDS'>;
  tickets: Pick<WsTickets, 'issue'>;
  sessionTokens: Pick<SessionTokens, 'mint'>;
  eventLog: Pick<EventLog, 'latestSeq'>;
  eventSource: ConversationEventSource;
  sse: LiveSseOptions;
  /** To tell client tools, whose calls the UI message stream leaves for the browser to answer. */
  tools: Pick<ToolRegistry, 'get'>;
}

/**
 * The routes a browser uses (docs/API.md, "AI SDK compatible routes"): the credentials it may
 * hold, and the AI SDK's chat transport at `/api/chat`. The websocket those credentials open is
 * documented here too; the gateway serves it, on the upgrade.
 */
export const browserRoutes: RouteFamily<BrowserRoutesNeeds> = {
  stage: 'user',
  openApi: { tag: { name: 'Browsers', description: 'Session tokens, websocket tickets, the websocket, and the AI SDK chat transport.' }, paths: browserPaths },
  mount: (app, needs) => {
    app.post('/v1/ws-tickets', async (_req, res) => {
      sendJson(res, wsTicketSchema, await needs.tickets.issue(principalOf(res)), 201);
    });
    app.post('/v1/session-tokens', async (req, res) => {
      const { ttlSeconds, agents } = parseInput(sessionTokenSchema, req.body);
      const principal = principalOf(res);
      // Each is the user's and not archived now; one archived later is refused when a turn names it.
      const agentIds = agents && [
        ...new Set(await Promise.all(agents.map(async (text, index) => (await needs.agentReferences.resolve(principal.userId, text, `agents.${index}`)).agentId))),
      ];
      sendJson(res, sessionTokenGrantSchema, await needs.sessionTokens.mint(principal, ttlSeconds ?? needs.config.SESSION_TOKEN_TTL_SECONDS, agentIds), 201);
    });
    const uiStream = createUiMessageStreamer(needs.eventSource, { ...needs.sse, isClientTool: (toolName) => needs.tools.get(toolName)?.kind === 'client' });
    app.use(
      '/api/chat',
      chatRouter({
        conversations: needs.conversations,
        messages: needs.messages,
        turns: needs.turns,
        toolCalls: needs.toolCalls,
        turnService: needs.turnService,
        answerClientTool: needs.answerClientTool,
        decideApproval: needs.decideApproval,
        toolApprovals: needs.toolApprovals,
        agentReferences: needs.agentReferences,
        latestSeq: (conversationId) => needs.eventLog.latestSeq(conversationId),
        uiStream,
      }),
    );
    return { endStreams: () => uiStream.endAll() };
  },
};
