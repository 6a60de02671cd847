import { batchChannel } from '../batches/batch-progress';
import { BatchRunner } from '../batches/batch-runner';
import type { Turn } from '../store/turns-repository';
import { TurnService, type TurnServiceDeps } from '../turns/turn-service';
import type { Resources } from './resources';
import { BudgetsRepository } from '../usage/store/budgets-repository';
import { UsageLedgerRepository } from '../usage/store/usage-ledger-repository';

/**
 * A process's turn service and batch runner, wired to each other: the runner posts items'
 * turns through the service, and every turn the service's deps end moves its batch item on.
 * A failure to move an item on is logged; the repair pass finishes it.
 */
export function turnServiceWithBatches(
  resources: Resources,
  deps: Omit<TurnServiceDeps, 'onTurnEnded' | 'models' | 'budgets'>,
): { turnService: TurnService; batchRunner: BatchRunner; onTurnEnded(turn: Turn): Promise<void> } {
  const onTurnEnded = (turn: Turn): Promise<void> =>
    batchRunner.turnEnded(turn).catch((error: unknown) => resources.logger.warn({ err: error, turnId: turn.id }, 'batch item did not move on; the repair pass will'));
  const turnService: TurnService = new TurnService({ ...deps, models: resources.models, budgets: new BudgetsRepository(resources.db), onTurnEnded });
  const batchRunner: BatchRunner = new BatchRunner({
    db: resources.db,
    batches: resources.batches,
    conversations: resources.conversations,
    messages: resources.messages,
    turns: resources.turns,
    toolCalls: resources.toolCalls,
    ledger: new UsageLedgerRepository(resources.db),
    turnService,
    metrics: resources.metrics,
    maxActiveTurnsPerUser: deps.maxActiveTurnsPerUser,
    notify: (batchId) => void resources.redis.publish(batchChannel(resources.config.REDIS_PREFIX, batchId), '1').catch(() => undefined),
    logger: resources.logger,
  });
  return { turnService, batchRunner, onTurnEnded };
}
