import { targetKey, type ModelCatalogue } from './model-catalogue';
import type { Price } from './models-file-schema';
import type { TargetCooldowns } from './target-cooldowns';
import { shownState } from './target-state';

/** One model as GET /v1/models (and the OpenAI models routes) list it. */
export interface ListedModel {
  name: string;
  /** Null when unknown (a target without one). */
  contextWindow: number | null;
  /** Null: unpriced (costs 0). */
  price: Price | null;
  targets: { provider: string; model: string; state: 'ok' | 'cooling_down'; until?: string }[];
}

export interface ModelListing {
  data: ListedModel[];
  defaultModel: string;
}

/** The catalogue's models in its order, each target with its state as every process sees it. */
export async function listModels(catalogue: ModelCatalogue, cooldowns: Pick<TargetCooldowns, 'all'>, now = Date.now()): Promise<ModelListing> {
  const states = await cooldowns.all();
  return {
    data: catalogue.models.map((model) => ({
      name: model.name,
      contextWindow: model.contextWindow ?? null,
      price: model.price ?? null,
      targets: model.targets.map((target) => ({ provider: target.provider, model: target.model, ...shownState(states.get(targetKey(target)) ?? null, now) })),
    })),
    defaultModel: catalogue.defaultModel,
  };
}

/** Every target of the models, each with whether it cools down now (the metrics' gauge). */
export async function coolingTargets(
  catalogue: ModelCatalogue,
  cooldowns: Pick<TargetCooldowns, 'all'>,
  now = Date.now(),
): Promise<{ provider: string; model: string; cooling: boolean }[]> {
  const states = await cooldowns.all();
  return catalogue
    .targets()
    .map((target) => ({ provider: target.provider, model: target.model, cooling: shownState(states.get(targetKey(target)) ?? null, now).state === 'cooling_down' }));
}
