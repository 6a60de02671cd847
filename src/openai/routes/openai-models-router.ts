import { Router } from 'express';
import { z } from 'zod';
import { jsonResponse } from '../../api/contract/operation';
import { notFound } from '../../errors/app-error';
import type { ModelCatalogue } from '../../models/model-catalogue';
import { documentOpenAiPaths, unixSeconds } from './openai-operation';

const openAiModelSchema = z
  .object({ id: z.string(), object: z.literal('model'), created: unixSeconds, owned_by: z.string() })
  .meta({ id: 'OpenAiModel', description: 'A model of "Models and providers" as OpenAI lists models.' });
type OpenAiModel = z.infer<typeof openAiModelSchema>;
const openAiModelListSchema = z.object({ object: z.literal('list'), data: z.array(openAiModelSchema) }).meta({ id: 'OpenAiModelList' });

export interface OpenAiModelsRouterDeps {
  models: readonly OpenAiModel[];
}

/**
 * The catalogue's models as OpenAI's model objects, pure: `created` is when this process
 * loaded them (the models file has no dates), `owned_by` Switchyard, which routes them.
 */
export function openAiModels(catalogue: Pick<ModelCatalogue, 'models'>, created: number): OpenAiModel[] {
  return catalogue.models.map((model) => ({ id: model.name, object: 'model', created, owned_by: 'switchyard' }));
}

/** `GET /openai/v1/models` and `/models/:id` (docs/API.md, "OpenAI-compatible routes"). */
export function openAiModelsRouter(deps: OpenAiModelsRouterDeps): Router {
  const router = Router();
  router.get('/', (_req, res) => {
    res.json({ object: 'list', data: deps.models });
  });
  router.get('/:id', (req, res) => {
    const id = req.params.id;
    const model = deps.models.find((each) => each.id === id);
    if (!model) throw notFound('model');
    res.json(model);
  });
  return router;
}

const modelId = z.object({ id: z.string().meta({ description: "The model's name." }) });

export const openAiModelPaths = documentOpenAiPaths({
  '/openai/v1/models': {
    get: { operationId: 'openAiListModels', summary: 'The models of "Models and providers"', responses: { '200': jsonResponse('The models.', openAiModelListSchema) } },
  },
  '/openai/v1/models/{id}': {
    get: {
      operationId: 'openAiGetModel',
      summary: 'One model',
      requestParams: { path: modelId },
      responses: { '200': jsonResponse('The model.', openAiModelSchema) },
      errors: [404],
    },
  },
});
