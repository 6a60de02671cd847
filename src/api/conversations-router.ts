import { Router } from 'express';
import {
  type CompactionPolicy,
  compactConversationSchema,
  conversationSchema,
  conversationWithMessagesSchema,
  createConversationSchema,
  createTurnSchema,
  forkConversationSchema,
  turnAcceptedSchema,
} from '@switchyard/protocol';
import type { AgentReferences } from '../agents/agent-references';
import { AppError, notFound } from '../errors/app-error';
import type { ConversationCursor, ConversationsRepository } from '../store/conversations-repository';
import type { Db } from '../store/db';
import type { MessagesRepository } from '../store/messages-repository';
import { deleteConversation } from '../turns/delete-conversation';
import { publicCompaction, type CompactionsRepository } from '../store/compactions-repository';
import type { ModelCatalogue } from '../models/model-catalogue';
import { compactionLimits } from '../turns/compaction-plan';
import { routeWindow } from '../turns/compacted-request';
import { parseMessageId } from '../store/message-id';
import { noBranchPoint, type BranchRequest } from '../turns/branch-request';
import { forkConversation } from '../turns/fork-conversation';
import type { TurnService } from '../turns/turn-service';
import { principalOf, userIdOf } from './require-user';
import { conversationDeletedSchema, conversationPageSchema } from './contract/conversations-contract';
import { getConversationSchema, listConversationsSchema } from './request-schemas';
import { sendJson } from './send-json';
import { agentIdOf, assertSessionMayUseAgent, assertSessionSetsNoConfiguration } from './session-configuration';
import { assertUsableToolNames, type UsableToolsDeps } from './usable-tools';
import { parseInput, parseRouteId } from './validate';

export interface ConversationsRouterDeps {
  db: Db;
  conversations: ConversationsRepository;
  messages: MessagesRepository;
  compactions: Pick<CompactionsRepository, 'list'>;
  /** A compaction policy needs its model's window, or `triggerTokens`. */
  models: Pick<ModelCatalogue, 'lookup' | 'defaultModel'>;
  turnService: TurnService;
  /** A conversation's or a turn's `agent`: the user's, not archived (404 otherwise). */
  agentReferences: Pick<AgentReferences, 'resolveOptional'>;
  /** To refuse `tools` lists naming tools the user may not use. */
  usableTools: UsableToolsDeps;
  /** The latest seq in the live event log (PostgreSQL's copy can lag by the last events). */
  latestSeq(conversationId: string): Promise<number>;
}

export function conversationsRouter(deps: ConversationsRouterDeps): Router {
  const router = Router();

  router.post('/', async (req, res) => {
    const body = parseInput(createConversationSchema, req.body);
    assertSessionSetsNoConfiguration(principalOf(res), body);
    await assertUsableToolNames(deps.usableTools, userIdOf(res), body.tools);
    await assertUsableToolNames(deps.usableTools, userIdOf(res), body.requireApproval, 'requireApproval');
    if (body.model !== undefined) deps.turnService.assertModel(body.model);
    if (body.compaction) assertCompactionFits(deps.models, body.compaction, body.model ?? deps.models.defaultModel);
    if (body.responseFormat !== undefined) deps.turnService.assertResponseFormat(body.responseFormat);
    const { agent: agentText, ...fields } = body;
    const agent = await deps.agentReferences.resolveOptional(userIdOf(res), agentText);
    assertSessionMayUseAgent(principalOf(res), agent?.agentId ?? null);
    const outcome = await deps.conversations.createUnlessExternalIdTaken({ userId: userIdOf(res), ...fields, ...(agent ? { agent } : {}) });
    if (outcome.kind === 'external_id_taken') {
      const { id } = outcome.existing;
      throw new AppError('external_id_conflict', `conversation ${id} already has this externalId`, { conversationId: id });
    }
    sendJson(res, conversationSchema, outcome.conversation, 201);
  });

  router.get('/', async (req, res) => {
    const query = parseInput(listConversationsSchema, req.query);
    const page = await deps.conversations.list(userIdOf(res), {
      limit: query.limit,
      ...(query.cursor ? { cursor: decodeCursor(query.cursor) } : {}),
      ...(query.externalId ? { externalId: query.externalId } : {}),
      ...(query.batch ? { batchItems: query.batch === 'true' } : {}),
      ...(query.source ? { sources: query.source } : {}),
    });
    sendJson(res, conversationPageSchema, { data: page.data, nextCursor: page.nextCursor ? encodeCursor(page.nextCursor) : null });
  });

  router.get('/:id', async (req, res) => {
    const conversation = await deps.conversations.get(userIdOf(res), parseRouteId(req.params.id, 'conversation'));
    if (!conversation) throw notFound('conversation');
    const { include } = parseInput(getConversationSchema, req.query);
    const [messages, latestSeq, compactions] = await Promise.all([
      deps.messages.list(conversation.id, { includeSuperseded: include === 'superseded' }),
      deps.latestSeq(conversation.id),
      deps.compactions.list(conversation.id),
    ]);
    sendJson(res, conversationWithMessagesSchema, {
      ...conversation,
      lastSeq: Math.max(conversation.lastSeq, latestSeq),
      messages,
      compactions: compactions.map(publicCompaction),
    });
  });

  router.delete('/:id', async (req, res) => {
    const id = parseRouteId(req.params.id, 'conversation');
    await deleteConversation(deps, userIdOf(res), id);
    sendJson(res, conversationDeletedSchema, { id, deleted: true });
  });

  router.post('/:id/turns', async (req, res) => {
    const conversationId = parseRouteId(req.params.id, 'conversation');
    const body = parseInput(createTurnSchema, req.body);
    assertSessionSetsNoConfiguration(principalOf(res), body);
    await assertUsableToolNames(deps.usableTools, userIdOf(res), body.tools);
    await assertUsableToolNames(deps.usableTools, userIdOf(res), body.requireApproval, 'requireApproval');
    const branch = branchOf(body);
    const agent = await deps.agentReferences.resolveOptional(userIdOf(res), body.agent);
    if (principalOf(res).agents) assertSessionMayUseAgent(principalOf(res), agent?.agentId ?? (await conversationAgentId(deps, userIdOf(res), conversationId)));
    const { turn, created } = await deps.turnService.create(userIdOf(res), conversationId, {
      content: body.content ?? null,
      keyId: principalOf(res).keyId,
      ...(branch ? { branch } : {}),
      onBusy: body.onBusy,
      ...(agent ? { agent } : {}),
      ...(body.idempotencyKey ? { idempotencyKey: body.idempotencyKey } : {}),
      options: {
        ...(body.model ? { model: body.model } : {}),
        ...(body.tools ? { tools: body.tools } : {}),
        ...(body.toolChoice ? { toolChoice: body.toolChoice } : {}),
        ...(body.requireApproval ? { requireApproval: body.requireApproval } : {}),
        ...(body.maxSteps ? { maxSteps: body.maxSteps } : {}),
        ...(body.maxHistoryMessages ? { maxHistoryMessages: body.maxHistoryMessages } : {}),
        ...(body.modelSettings ? { modelSettings: body.modelSettings } : {}),
        ...(body.responseFormat ? { responseFormat: body.responseFormat } : {}),
      },
    });
    sendJson(res, turnAcceptedSchema, { turnId: turn.id, status: turn.status }, created ? 202 : 200);
  });

  router.post('/:id/compact', async (req, res) => {
    const conversationId = parseRouteId(req.params.id, 'conversation');
    const { instructions } = parseInput(compactConversationSchema, req.body);
    const conversation = await deps.conversations.get(userIdOf(res), conversationId);
    if (!conversation) throw notFound('conversation');
    assertCompactionFits(deps.models, conversation.compaction ?? {}, conversation.model ?? deps.models.defaultModel);
    const { turn } = await deps.turnService.create(userIdOf(res), conversationId, {
      content: null,
      onBusy: 'reject',
      options: { compact: instructions ? { instructions } : {} },
    });
    sendJson(res, turnAcceptedSchema, { turnId: turn.id, status: turn.status }, 202);
  });

  router.post('/:id/fork', async (req, res) => {
    const conversationId = parseRouteId(req.params.id, 'conversation');
    const { messageId } = parseInput(forkConversationSchema, req.body);
    const fork = await forkConversation(deps, userIdOf(res), conversationId, parseMessageId(messageId));
    sendJson(res, conversationSchema, fork, 201);
  });

  return router;
}

/** The agent a conversation's turns run on, null for none; a conversation not the user's is a 404. */
async function conversationAgentId(deps: Pick<ConversationsRouterDeps, 'conversations'>, userId: string, conversationId: string): Promise<string | null> {
  const conversation = await deps.conversations.get(userId, conversationId);
  if (!conversation) throw notFound('conversation');
  return agentIdOf(conversation.agent);
}

/** A 400 for a policy that cannot trigger: its model has no known window and it gives no `triggerTokens`. */
function assertCompactionFits(models: Pick<ModelCatalogue, 'lookup'>, policy: CompactionPolicy, model: string): void {
  const lookup = models.lookup(model);
  const limits = compactionLimits(policy, lookup.ok ? routeWindow(lookup.route) : undefined);
  if (!limits.ok) throw new AppError('invalid_request', limits.message, [{ field: 'compaction.triggerTokens', message: limits.message }]);
  if (policy.model !== undefined && !models.lookup(policy.model).ok) {
    throw new AppError('invalid_request', `no model "${policy.model}"`, [{ field: 'compaction.model', message: `no model "${policy.model}"` }]);
  }
}

/** A regenerate (`regenerate`, optionally `fromMessageId`) or an edit (`content` and `fromMessageId`); undefined for a plain turn. */
function branchOf(body: { regenerate?: boolean | undefined; fromMessageId?: string | undefined }): BranchRequest | undefined {
  if (!body.regenerate && body.fromMessageId === undefined) return undefined;
  const kind = body.regenerate ? 'regenerate' : 'edit';
  if (body.fromMessageId === undefined) return { kind, from: null, field: 'regenerate' };
  const rowId = parseMessageId(body.fromMessageId);
  // Text that is no message id names no message on any path.
  if (rowId === null) throw noBranchPoint({ kind, from: body.fromMessageId, field: 'fromMessageId' });
  return { kind, from: rowId, field: 'fromMessageId' };
}

function encodeCursor(cursor: ConversationCursor): string {
  return Buffer.from(JSON.stringify(cursor)).toString('base64url');
}

function decodeCursor(text: string): ConversationCursor {
  try {
    const value = JSON.parse(Buffer.from(text, 'base64url').toString('utf8')) as Partial<ConversationCursor>;
    if (typeof value.before === 'string' && /^\d{1,18}$/.test(value.before)) return { before: value.before };
  } catch {
    // fall through to the error below
  }
  throw new AppError('invalid_request', 'invalid cursor', [{ field: 'cursor', message: 'not a cursor from this API' }]);
}
