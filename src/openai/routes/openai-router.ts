import { Router } from 'express';
import { holdBodyBytes } from '../../api/body-bytes';
import { readJsonBody } from '../../api/json-body';
import type { SubmissionSlots } from '../../api/submission-slots';
import { openAiFilesRouter, type OpenAiFilesRouterDeps } from './openai-files-router';
import { openAiResponsesRouter, type OpenAiResponsesRouterDeps } from './openai-responses-router';
import { openAiBatchesRouter } from './openai-batches-router';
import type { OpenAiBatchesService } from '../openai-batches-service';
import { openAiChatCompletionsRouter, type OpenAiChatCompletionsRouterDeps } from './openai-chat-completions-router';
import { openAiModelsRouter, type OpenAiModelsRouterDeps } from './openai-models-router';
import { openAiConversationsRouter } from './openai-conversations-router';
import type { OpenAiConversationsService } from '../openai-conversations-service';

export interface OpenAiRouterDeps {
  files: OpenAiFilesRouterDeps;
  responses: OpenAiResponsesRouterDeps;
  batches: OpenAiBatchesService;
  chat: OpenAiChatCompletionsRouterDeps;
  models: OpenAiModelsRouterDeps;
  conversations: OpenAiConversationsService;
  /** MAX_BODY_BYTES: the JSON bodies of the other routes. */
  maxBodyBytes: number;
  /** MAX_TURN_BODY_BYTES_IN_FLIGHT: `POST /responses` shares it with `POST /api/chat`. */
  turnBodyBytes: SubmissionSlots;
}

/**
 * The OpenAI-compatible routes under `/openai/v1` (docs/API.md): OpenAI's SDKs work against
 * them by changing `baseURL`. Uploads are read as multipart before the JSON body parser.
 */
export function openAiRouter(deps: OpenAiRouterDeps): Router {
  const router = Router();
  router.use('/files', openAiFilesRouter(deps.files));
  // The Responses routes with a body are POSTs: a create, or a cancel's (which ends at once).
  router.use('/models', openAiModelsRouter(deps.models));
  router.use('/responses', holdBodyBytes(deps.turnBodyBytes, deps.maxBodyBytes));
  router.use('/chat/completions', holdBodyBytes(deps.turnBodyBytes, deps.maxBodyBytes));
  router.use(readJsonBody(deps.maxBodyBytes));
  router.use('/responses', openAiResponsesRouter(deps.responses));
  router.use('/chat/completions', openAiChatCompletionsRouter(deps.chat));
  router.use('/batches', openAiBatchesRouter({ batches: deps.batches }));
  router.use('/conversations', openAiConversationsRouter({ conversations: deps.conversations }));
  return router;
}
