import { listModels } from '../models/model-listing';
import type { ModelCatalogue } from '../models/model-catalogue';
import type { TargetCooldowns } from '../models/target-cooldowns';
import { modelPaths } from './contract/models-contract';
import { modelsRouter } from './models-router';
import type { RouteFamily } from './route-family';

interface ModelsRoutesNeeds {
  models: ModelCatalogue;
  targetCooldowns: TargetCooldowns;
}

/** `/v1/models` (docs/API.md, "Models and providers"): the deployment's models and each target's state. */
export const modelsRoutes: RouteFamily<ModelsRoutesNeeds> = {
  stage: 'user',
  openApi: { tag: { name: 'Models', description: 'Providers, models and their fallbacks (MODELS_FILE).' }, paths: modelPaths },
  mount: (app, needs) => {
    app.use('/v1/models', modelsRouter({ listModels: () => listModels(needs.models, needs.targetCooldowns) }));
  },
};
