import type { ApiDeps } from '../../api/api-deps';
import type { RouteFamily } from '../../api/route-family';
import { userChecks } from '../../api/user-checks';
import { openAiBatchPaths } from './openai-batches-contract';
import { openAiErrorHandler, openAiNotFound } from './openai-error-handler';
import { openAiFilePaths } from './openai-files-contract';
import { openAiErrorSchema } from './openai-operation';
import { openAiResponsePaths } from './openai-responses-contract';
import { openAiRouter } from './openai-router';

/**
 * The OpenAI dialect under `/openai/v1` (docs/API.md, "OpenAI-compatible routes"). Before the
 * API's body parsers, as its uploads are multipart; OpenAI's SDKs answer to OpenAI's error shape,
 * so these routes have their own 404 and error handler, which also answer their refused credentials.
 */
export const openAiRoutes: RouteFamily<ApiDeps> = {
  stage: 'own-body',
  openApi: {
    tag: { name: 'OpenAI-compatible', description: 'OpenAI\'s SDKs work against `/openai/v1` by changing `baseURL`; errors are OpenAI\'s `{"error": {message, type, param, code}}`.' },
    paths: { ...openAiFilePaths, ...openAiBatchPaths, ...openAiResponsePaths },
    schemas: { OpenAiError: openAiErrorSchema },
  },
  mount: (app, deps) => {
    app.use('/openai/v1', ...userChecks(deps), openAiRouter(deps.openAi), openAiNotFound, openAiErrorHandler(deps.logger));
  },
};
