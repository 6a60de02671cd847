import type { AgentReferences } from '../agents/agent-references';
import type { EventLog } from '../event-log/event-log';
import type { Db } from '../store/db';
import type { ConversationsRepository } from '../store/conversations-repository';
import type { CompactionsRepository } from '../store/compactions-repository';
import type { ModelCatalogue } from '../models/model-catalogue';
import type { MessagesRepository } from '../store/messages-repository';
import type { TurnService } from '../turns/turn-service';
import { conversationPaths } from './contract/conversations-contract';
import { conversationsRouter } from './conversations-router';
import type { RouteFamily } from './route-family';
import { usableToolsOf, type UserToolsNeeds } from './usable-tools';

interface ConversationsRoutesNeeds extends UserToolsNeeds {
  db: Db;
  conversations: ConversationsRepository;
  messages: MessagesRepository;
  compactions: CompactionsRepository;
  models: ModelCatalogue;
  turnService: TurnService;
  agentReferences: Pick<AgentReferences, 'resolveOptional'>;
  /** The latest seq in the live event log (PostgreSQL's copy can lag by the last events). */
  eventLog: Pick<EventLog, 'latestSeq'>;
}

/** `/v1/conversations` (docs/API.md, "HTTP API"): conversations, their turns, edits, regenerations and forks. */
export const conversationsRoutes: RouteFamily<ConversationsRoutesNeeds> = {
  stage: 'user',
  openApi: { tag: { name: 'Conversations' }, paths: conversationPaths },
  mount: (app, needs) => {
    app.use(
      '/v1/conversations',
      conversationsRouter({
        db: needs.db,
        conversations: needs.conversations,
        messages: needs.messages,
        compactions: needs.compactions,
        models: needs.models,
        turnService: needs.turnService,
        agentReferences: needs.agentReferences,
        usableTools: usableToolsOf(needs),
        latestSeq: (conversationId) => needs.eventLog.latestSeq(conversationId),
      }),
    );
  },
};
