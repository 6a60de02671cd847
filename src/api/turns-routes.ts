import type { Config } from '../config/config';
import { isBackendUnavailable } from '../errors/backend-unavailable';
import { InflightState } from '../event-log/inflight-state';
import type { RedisClient } from '../redis/redis-connection';
import { turnPaths } from './contract/turns-contract';
import type { LiveSseOptions } from './live-sse';
import type { RouteFamily } from './route-family';
import { createTurnEventStreamer, type ConversationEventSource } from './turn-event-stream';
import { turnsRouter, type TurnsRouterDeps } from './turns-router';
import type { Db } from '../store/db';
import { UsageLedgerRepository } from '../usage/store/usage-ledger-repository';

interface TurnsRoutesNeeds extends Pick<TurnsRouterDeps, 'turns' | 'toolCalls' | 'messages' | 'turnService' | 'answerClientTool' | 'providerCalls'> {
  config: Pick<Config, 'REDIS_PREFIX'>;
  db: Db;
  /** Where the running step's partial tool calls are read. */
  redis: RedisClient;
  eventSource: ConversationEventSource;
  sse: LiveSseOptions;
}

/** `/v1/turns` (docs/API.md, "HTTP API"): a turn, its events (SSE), its cancel and its client tools' answers. */
export const turnsRoutes: RouteFamily<TurnsRoutesNeeds> = {
  stage: 'user',
  openApi: { tag: { name: 'Turns' }, paths: turnPaths },
  mount: (app, needs) => {
    const eventStream = createTurnEventStreamer(needs.eventSource, needs.sse);
    app.use(
      '/v1/turns',
      turnsRouter({
        turns: needs.turns,
        toolCalls: needs.toolCalls,
        messages: needs.messages,
        turnService: needs.turnService,
        eventStream,
        answerClientTool: needs.answerClientTool,
        providerCalls: needs.providerCalls,
        ledger: new UsageLedgerRepository(needs.db),
        // The buffers are a convenience: while Redis is down the turn is still shown, without them.
        inflight: (turn) =>
          InflightState.read(needs.redis, needs.config.REDIS_PREFIX, turn).catch((error: unknown) => {
            if (isBackendUnavailable(error)) return null;
            throw error;
          }),
      }),
    );
    return { endStreams: () => eventStream.endAll() };
  },
};
