import { Router } from 'express';
import { readJsonBody } from './json-body';
import { openAiFilesRouter, type OpenAiFilesRouterDeps } from './openai-files-router';
import { openAiResponsesRouter, type OpenAiResponsesRouterDeps } from './openai-responses-router';

export interface OpenAiRouterDeps {
  files: OpenAiFilesRouterDeps;
  responses: OpenAiResponsesRouterDeps;
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
  return router;
}
