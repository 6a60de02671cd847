import { Router } from 'express';
import { readJsonBody } from '../../api/json-body';
import { openAiFilesRouter, type OpenAiFilesRouterDeps } from './openai-files-router';
import { openAiResponsesRouter, type OpenAiResponsesRouterDeps } from './openai-responses-router';
import { openAiBatchesRouter } from './openai-batches-router';
import type { OpenAiBatchesService } from '../openai-batches-service';

export interface OpenAiRouterDeps {
  files: OpenAiFilesRouterDeps;
  responses: OpenAiResponsesRouterDeps;
  batches: OpenAiBatchesService;
  /** MAX_BODY_BYTES: the JSON bodies of the other routes. */
  maxBodyBytes: number;
}

/**
 * The OpenAI-compatible routes under `/openai/v1` (docs/API.md): OpenAI's SDKs work against
 * them by changing `baseURL`. Uploads are read as multipart before the JSON body parser.
 */
export function openAiRouter(deps: OpenAiRouterDeps): Router {
  const router = Router();
  router.use('/files', openAiFilesRouter(deps.files));
  router.use(readJsonBody(deps.maxBodyBytes));
  router.use('/responses', openAiResponsesRouter(deps.responses));
  router.use('/batches', openAiBatchesRouter({ batches: deps.batches }));
  return router;
}
