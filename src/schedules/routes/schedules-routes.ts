import type { Logger } from 'pino';
import type { AgentReferences } from '../../agents/agent-references';
import type { RouteFamily } from '../../api/route-family';
import type { ConversationsRepository } from '../../store/conversations-repository';
import type { TurnsRepository } from '../../store/turns-repository';
import type { TurnService } from '../../turns/turn-service';
import { ScheduleRunner } from '../schedule-runner';
import type { SchedulesRepository } from '../store/schedules-repository';
import { schedulePaths } from './schedules-contract';
import { schedulesRouter } from './schedules-router';

interface SchedulesRoutesNeeds {
  schedules: SchedulesRepository;
  agentReferences: Pick<AgentReferences, 'resolve'>;
  conversations: ConversationsRepository;
  turns: TurnsRepository;
  turnService: TurnService;
  logger: Logger;
}

/** `/v1/schedules` (docs/API.md, "Schedules"): an API key's routes. The workers fire the ticks; a trigger runs here. */
export const schedulesRoutes: RouteFamily<SchedulesRoutesNeeds> = {
  stage: 'user',
  openApi: { tag: { name: 'Schedules', description: 'Turns that run by themselves (docs/API.md, "Schedules").' }, paths: schedulePaths },
  mount: (app, needs) => {
    const runner = new ScheduleRunner({ schedules: needs.schedules, conversations: needs.conversations, turns: needs.turns, turnService: needs.turnService, logger: needs.logger });
    app.use('/v1/schedules', schedulesRouter({ schedules: needs.schedules, runner, agentReferences: needs.agentReferences, conversations: needs.conversations }));
  },
};
