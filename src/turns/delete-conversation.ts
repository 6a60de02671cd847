import { AppError, notFound } from '../errors/app-error';
import type { ConversationsRepository } from '../store/conversations-repository';
import type { Db } from '../store/db';

/**
 * `DELETE /v1/conversations/:id` and its OpenAI twin (docs/API.md): the conversation goes with
 * its messages and turns, the usage ledger keeps its rows; 409 while a turn is active, as the
 * turn would run on and write into nothing.
 */
export async function deleteConversation(deps: { db: Db; conversations: Pick<ConversationsRepository, 'deleteIfIdle'> }, userId: string, id: string): Promise<void> {
  const outcome = await deps.db.transaction((tx) => deps.conversations.deleteIfIdle(userId, id, tx));
  if (outcome.kind === 'missing') throw notFound('conversation');
  if (outcome.kind === 'busy')
    throw new AppError('conversation_busy', `conversation ${id} has a turn still active; cancel it or delete the conversation once it has ended`, {
      activeTurnId: outcome.activeTurnId,
    });
}
