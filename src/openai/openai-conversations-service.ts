import { AppError, notFound } from '../errors/app-error';
import type { Conversation, ConversationsRepository } from '../store/conversations-repository';
import type { Db } from '../store/db';
import type { ItemRow, MessagesRepository } from '../store/messages-repository';
import type { ChatMessage } from '../providers/model-provider';
import { findToolExchangeFault } from '../providers/tool-exchange-fault';
import { deleteConversation } from '../turns/delete-conversation';
import { conversationItems, itemPage } from './conversation-items';
import type { CreateOpenAiConversation } from './conversation-request';
import { planResponseTurn } from './response-request';

export interface OpenAiConversationsServiceDeps {
  db: Db;
  conversations: Pick<ConversationsRepository, 'create' | 'get' | 'updateMetadata' | 'deleteIfIdle'>;
  messages: Pick<MessagesRepository, 'list' | 'insertItems'>;
}

/** OpenAI's `Conversation`. */
export interface OpenAiConversationObject {
  id: string;
  object: 'conversation';
  created_at: number;
  metadata: Record<string, unknown>;
}

/**
 * OpenAI's Conversations API on Switchyard's conversations (docs/API.md, "OpenAI-compatible
 * routes"): the same conversation, and the same id, as `/v1`'s; its `metadata` is the
 * conversation's.
 */
export class OpenAiConversationsService {
  constructor(private readonly deps: OpenAiConversationsServiceDeps) {}

  /**
   * A new conversation, kept OPENAI_RETENTION_DAYS, with its `items` as the history its first
   * response follows: system and developer items become its system prompt, the others one
   * stored message of chat messages (as a response's input is). Items may end with function
   * calls the caller answers in its first response; any other unpaired call is a 400.
   */
  async create(userId: string, body: CreateOpenAiConversation): Promise<OpenAiConversationObject> {
    const plan = body.items && body.items.length > 0 ? planResponseTurn({ input: body.items }) : null;
    const rows = plan ? itemRows(plan.messages) : [];
    const conversation = await this.deps.db.transaction(async (tx) => {
      const made = await this.deps.conversations.create(
        {
          userId,
          title: 'OpenAI conversation',
          metadata: body.metadata ?? {},
          ...(plan?.instructions !== undefined ? { system: plan.instructions } : {}),
          openaiRetained: true,
          // Made for OpenAI's Conversations API, answered by Responses: listed with them.
          source: 'responses',
        },
        tx,
      );
      await this.deps.messages.insertItems(made.id, rows, tx);
      return made;
    });
    return conversationObject(conversation);
  }

  async get(userId: string, id: string): Promise<OpenAiConversationObject> {
    return conversationObject(await this.conversation(userId, id));
  }

  async update(userId: string, id: string, metadata: Record<string, string> | null): Promise<OpenAiConversationObject> {
    const updated = await this.deps.conversations.updateMetadata(userId, id, metadata ?? {});
    if (!updated) throw notFound('conversation');
    return conversationObject(updated);
  }

  async delete(userId: string, id: string): Promise<{ id: string; object: 'conversation.deleted'; deleted: true }> {
    await deleteConversation(this.deps, userId, id);
    return { id, object: 'conversation.deleted', deleted: true };
  }

  /** The conversation's path as items, a page of them. */
  async items(userId: string, id: string, query: { after?: string | undefined; limit: number; order: 'asc' | 'desc' }): Promise<ReturnType<typeof itemPage>> {
    const conversation = await this.conversation(userId, id);
    return itemPage(conversationItems(await this.deps.messages.list(conversation.id)), query);
  }

  private async conversation(userId: string, id: string): Promise<Conversation> {
    const conversation = await this.deps.conversations.get(userId, id);
    if (!conversation) throw notFound('conversation');
    return conversation;
  }
}

/**
 * Items (as chat messages) as the rows they are stored as: the history as one user message of
 * chat messages, as a response's input is; items that end with function calls the caller has
 * yet to answer keep that last step in rows of its own, so that admitting a `/v1` turn finds
 * the calls unanswered (migrations/0023) until a response answers them. Any other unpaired
 * call is a 400, as a response's input's is. Pure.
 */
export function itemRows(messages: readonly ChatMessage[]): ItemRow[] {
  const fault = findToolExchangeFault(messages);
  const trailing = fault?.kind === 'unanswered' && messages.slice(fault.index + 1).every((message) => message.role === 'tool') ? fault.index : messages.length;
  if (fault && trailing === messages.length) {
    const message =
      fault.kind === 'unanswered'
        ? `no tool output found for function call ${fault.callIds.join(', ')}`
        : `the function_call_output with call_id ${fault.callId} answers no function_call just before it`;
    throw new AppError('invalid_request', `invalid request: items: ${message}`, [{ field: 'items', message }]);
  }
  const history = messages.slice(0, trailing);
  const rows: ItemRow[] = [];
  const [only] = history;
  if (history.length === 1 && only!.role === 'user') rows.push({ role: 'user', content: only!.content });
  else if (history.length > 0) rows.push({ role: 'user', content: { type: 'chat_messages', messages: history } });
  for (const message of messages.slice(trailing)) {
    if (message.role === 'assistant') rows.push({ role: 'assistant', content: message.content ?? null, ...(message.tool_calls ? { toolCalls: message.tool_calls } : {}) });
    else if (message.role === 'tool') rows.push({ role: 'tool', content: message.content, toolCallId: message.tool_call_id });
  }
  return rows;
}

function conversationObject(conversation: Conversation): OpenAiConversationObject {
  return { id: conversation.id, object: 'conversation', created_at: Math.floor(Date.parse(conversation.createdAt) / 1000), metadata: conversation.metadata ?? {} };
}
