import type { Logger } from 'pino';
import type { ConversationsRepository } from '../store/conversations-repository';
import type { Db } from '../store/db';
import { startPeriodicPass, type PeriodicPass } from '../timers/periodic-pass';

export interface ConversationRetentionDeps {
  db: Db;
  conversations: Pick<ConversationsRepository, 'listExpiredOpenAi' | 'deleteIfExpired'>;
}

const DAY_MS = 24 * 3600 * 1000;
/** Conversations listed, and deleted one transaction each, per round of a sweep. */
const PAGE = 100;

/**
 * Deletes the conversations made by `/openai/v1` whose last turn is more than `retentionDays`
 * before `now` (docs/API.md, "OpenAI-compatible routes": OPENAI_RETENTION_DAYS), as
 * `DELETE /v1/conversations/:id` does; the usage ledger keeps its rows. One whose turn is still
 * active, or that took a turn since it was listed, stays. Idempotent: processes that sweep at
 * once delete each conversation once. How many it deleted.
 */
export async function sweepExpiredConversations(deps: ConversationRetentionDeps, options: { now: Date; retentionDays: number; maxRounds?: number }): Promise<number> {
  if (options.retentionDays === 0) return 0;
  const before = new Date(options.now.getTime() - options.retentionDays * DAY_MS);
  let deleted = 0;
  for (let round = 0; round < (options.maxRounds ?? 10); round++) {
    const expired = await deps.conversations.listExpiredOpenAi(before, PAGE);
    for (const { id } of expired) if (await deps.db.transaction((tx) => deps.conversations.deleteIfExpired(id, before, tx))) deleted++;
    if (expired.length < PAGE) break;
  }
  return deleted;
}

/** Sweeps every `intervalMs` in each worker process, and once at start; a backlog is worked through over the next passes. */
export function startConversationRetention(deps: ConversationRetentionDeps, options: { intervalMs: number; retentionDays: number; logger: Logger }): PeriodicPass {
  return startPeriodicPass(
    async () => {
      const deleted = await sweepExpiredConversations(deps, { now: new Date(), retentionDays: options.retentionDays });
      if (deleted > 0) options.logger.info({ deleted, retentionDays: options.retentionDays }, 'deleted OpenAI conversations past their retention');
    },
    { intervalMs: options.intervalMs, atStart: true, onError: (error) => options.logger.warn({ err: error }, 'conversation retention sweep failed; trying again later') },
  );
}
