import type { Price } from './models-file-schema';

/** A provider as requests are sent to it: its keys and headers already taken from the environment. */
export interface ProviderSpec {
  name: string;
  /** Undefined only for the LLM_* provider of a process that runs the scripted model itself (LLM_BASE_URL unset). */
  baseURL: string | undefined;
  apiKey?: string;
  headers: Record<string, string>;
  timeoutMs?: number;
  maxConcurrency?: number;
  allowDirect: boolean;
  price?: Price;
}

/** Where a step may go: a provider and the model's name there, with that target's window and price. */
export interface Target {
  provider: string;
  model: string;
  contextWindow?: number;
  price?: Price;
}

export interface ModelSpec {
  name: string;
  targets: Target[];
  /** The smallest of its targets' windows (a target without one makes it unknown). */
  contextWindow?: number;
  price?: Price;
}

/** What a turn's `model` names: its targets in order, and whether it may fall back (a direct call does not). */
export interface ModelRoute {
  name: string;
  targets: Target[];
}

export type ModelLookup = { ok: true; route: ModelRoute } | { ok: false; message: string };

/**
 * The providers and models of a deployment, from the models file or from LLM_* (one provider,
 * `default`, which takes any model name). Pure: loading and the environment are elsewhere.
 */
export class ModelCatalogue {
  private readonly byName: Map<string, ModelSpec>;

  constructor(
    readonly providers: ReadonlyMap<string, ProviderSpec>,
    readonly models: readonly ModelSpec[],
    readonly defaultModel: string,
    /** LLM_*: a name that is no model goes to this provider (`default`) as it is, with its window and price. */
    private readonly open?: Omit<Target, 'model'>,
  ) {
    this.byName = new Map(models.map((model) => [model.name, model]));
  }

  /**
   * A model of the catalogue by its name, or `<provider>/<upstream model>` (split at the first
   * `/`) to a provider that allows direct calls; else a message naming the models there are.
   */
  lookup(name: string): ModelLookup {
    const model = this.byName.get(name);
    if (model) return { ok: true, route: { name, targets: model.targets } };
    if (this.open) return { ok: true, route: { name, targets: [{ ...this.open, model: name }] } };
    const slash = name.indexOf('/');
    const provider = slash > 0 ? this.providers.get(name.slice(0, slash)) : undefined;
    if (provider?.allowDirect && slash < name.length - 1) {
      return { ok: true, route: { name, targets: [{ provider: provider.name, model: name.slice(slash + 1), ...priceOf(provider) }] } };
    }
    const direct = [...this.providers.values()].filter((each) => each.allowDirect).map((each) => `${each.name}/<model>`);
    return { ok: false, message: `no model "${name}": the models are ${[...this.byName.keys(), ...direct].join(', ')}` };
  }

  /** Every target of every model, once each (what may cool down). */
  targets(): Target[] {
    const seen = new Map<string, Target>();
    for (const model of this.models) for (const target of model.targets) seen.set(targetKey(target), target);
    return [...seen.values()];
  }
}

/** A target's name in Redis and in metrics: its provider and its model there. */
export function targetKey(target: Pick<Target, 'provider' | 'model'>): string {
  return `${target.provider}/${target.model}`;
}

function priceOf(provider: ProviderSpec | undefined): { price?: Price } {
  return provider?.price ? { price: provider.price } : {};
}
