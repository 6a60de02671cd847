import { Router } from 'express';
import { userIdOf } from '../../api/require-user';
import { sendJson } from '../../api/send-json';
import { parseInput, parseRouteId } from '../../api/validate';
import { createOpenAiConversationSchema, openAiItemListQuerySchema, updateOpenAiConversationSchema } from '../conversation-request';
import type { OpenAiConversationsService } from '../openai-conversations-service';
import { openAiConversationSchema, openAiItemListSchema } from './openai-conversations-contract';

/** `/openai/v1/conversations` (docs/API.md, "OpenAI-compatible routes"). */
export function openAiConversationsRouter(deps: { conversations: OpenAiConversationsService }): Router {
  const router = Router();
  const { conversations } = deps;

  router.post('/', async (req, res) => {
    sendJson(res, openAiConversationSchema, await conversations.create(userIdOf(res), parseInput(createOpenAiConversationSchema, req.body ?? {})));
  });

  router.get('/:id', async (req, res) => {
    sendJson(res, openAiConversationSchema, await conversations.get(userIdOf(res), parseRouteId(req.params.id, 'conversation')));
  });

  router.post('/:id', async (req, res) => {
    const id = parseRouteId(req.params.id, 'conversation');
    const { metadata } = parseInput(updateOpenAiConversationSchema, req.body);
    sendJson(res, openAiConversationSchema, await conversations.update(userIdOf(res), id, metadata));
  });

  router.delete('/:id', async (req, res) => {
    res.json(await conversations.delete(userIdOf(res), parseRouteId(req.params.id, 'conversation')));
  });

  router.get('/:id/items', async (req, res) => {
    const id = parseRouteId(req.params.id, 'conversation');
    const query = parseInput(openAiItemListQuerySchema, req.query);
    sendJson(res, openAiItemListSchema, await conversations.items(userIdOf(res), id, query));
  });

  return router;
}
