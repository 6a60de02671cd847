import { Router } from 'express';
import type { ModelListing } from '../models/model-listing';
import { modelListSchema } from './contract/models-contract';
import { sendJson } from './send-json';

export interface ModelsRouterDeps {
  listModels(): Promise<ModelListing>;
}

/** `GET /v1/models`: the deployment's models with each target's state. */
export function modelsRouter(deps: ModelsRouterDeps): Router {
  const router = Router();
  router.get('/', async (_req, res) => {
    sendJson(res, modelListSchema, await deps.listModels());
  });
  return router;
}
