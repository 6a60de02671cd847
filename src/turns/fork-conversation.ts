import { AppError, notFound } from '../errors/app-error';
import type { Conversation, ConversationsRepository } from '../store/conversations-repository';
import type { MessagesRepository } from '../store/messages-repository';
import { findPathFault } from './path-fault';

export interface ForkDeps {
  conversations: Pick<ConversationsRepository, 'get' | 'fork'>;
  messages: Pick<MessagesRepository, 'listOutline'>;
}

/**
 * `POST /v1/conversations/:id/fork`: a new conversation holding copies of the path up to the
 * message `rowId` (null: text that names no message).
 * 1. The source must be the user's (404 otherwise, as for a missing one).
 * 2. The copy is the path up to the message and the tool messages that directly follow it: a
 *    fork at any message of a step (its assistant message or one of its results) takes the
 *    step's other results too, since a step cut short is a history no provider accepts.
 * 3. A copy providers would still refuse is not made (409 naming the calls): calls whose
 *    results are not on the path up to the message (awaiting an approval, a client or their
 *    tools, or a caller's function outputs, which the next input holds) could never get them
 *    in the fork, whose copies belong to no turn.
 * 4. The messages checked are the ones copied, by id, whatever happens to the source meanwhile.
 */
export async function forkConversation(deps: ForkDeps, userId: string, id: string, rowId: string | null): Promise<Conversation> {
  if (!(await deps.conversations.get(userId, id))) throw notFound('conversation');
  const outline = rowId === null ? [] : await deps.messages.listOutline(id, { rowId, inclusive: true, withToolRun: true });
  if (rowId === null || outline.length === 0) throw refusal('invalid_request', "is not a message on this conversation's path");
  const fault = findPathFault(outline);
  if (fault) {
    throw refusal(
      'conflict',
      fault.unsettledEnd
        ? `${fault.text} up to it: fork once the calls have their results (they may await an approval, a client's answer or their tools), at the message that holds them (a caller's function outputs come in the next input), or at an earlier message`
        : `the path up to it is not a history providers accept: ${fault.text}`,
    );
  }
  const fork = await deps.conversations.fork(userId, id, rowId, [...new Set(outline.map((message) => message.rowId))]);
  // Deleted since it was read.
  if (!fork) throw notFound('conversation');
  return fork;
}

function refusal(code: 'invalid_request' | 'conflict', message: string): AppError {
  return new AppError(code, `${code === 'conflict' ? 'cannot fork there' : 'invalid request'}: messageId: ${message}`, [{ field: 'messageId', message }]);
}
