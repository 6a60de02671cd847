import fs from 'node:fs';
import path from 'node:path';
import type { Config } from '../config/config';
import { StartupError } from '../errors/startup-error';
import { errorMessage } from '../errors/switchyard-error';
import { describeFieldIssue, describeZodIssues } from '../errors/zod-issues';
import { substituteEnvironment, substituteEnvironmentInMap } from '../tools/environment-references';
import { ModelCatalogue, type ModelSpec, type ProviderSpec, type Target } from './model-catalogue';
import { modelsFileSchema, type ModelsFile } from './models-file-schema';

export class ModelsFileError extends StartupError {
  override readonly code = 'models_file';
}

/** The provider LLM_* describe. */
export const DEFAULT_PROVIDER = 'default';

/** What of the config the catalogue is made from. */
export type CatalogueConfig = Pick<Config, 'MODELS_FILE' | 'LLM_BASE_URL' | 'LLM_API_KEY' | 'LLM_MODEL' | 'LLM_CONTEXT_WINDOW' | 'LLM_PRICE'>;

/**
 * The deployment's models: MODELS_FILE, else `./models.json` when there is one, else the LLM_*
 * provider alone. A file that does not parse stops the start with one line naming the file and
 * the field (`${VAR}` references are resolved here; their values are never in a message).
 */
export function loadModelCatalogue(config: CatalogueConfig, env: Record<string, string | undefined>, cwd = process.cwd()): ModelCatalogue {
  const file = config.MODELS_FILE ? path.resolve(cwd, config.MODELS_FILE) : path.resolve(cwd, 'models.json');
  if (!config.MODELS_FILE && !fs.existsSync(file)) return environmentCatalogue(config);
  let text: string;
  try {
    text = fs.readFileSync(file, 'utf8');
  } catch (error) {
    throw new ModelsFileError(`models file ${file}: cannot be read (${errorMessage(error)})`);
  }
  return parseModelsFile(text, file, env);
}

/** A models file's text as a catalogue; the error names the file and the first field wrong. */
export function parseModelsFile(text: string, file: string, env: Record<string, string | undefined>): ModelCatalogue {
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (error) {
    throw new ModelsFileError(`models file ${file}: not valid JSON (${errorMessage(error)})`);
  }
  const parsed = modelsFileSchema.safeParse(json);
  if (!parsed.success) throw new ModelsFileError(`models file ${file}: ${describeZodIssues(parsed.error.issues.slice(0, 1))}`);
  return catalogueOf(parsed.data, (field, message) => new ModelsFileError(`models file ${file}: ${describeFieldIssue({ field, message })}`), env);
}

function catalogueOf(file: ModelsFile, fail: (field: string, message: string) => Error, env: Record<string, string | undefined>): ModelCatalogue {
  const providers = new Map<string, ProviderSpec>();
  for (const [name, provider] of Object.entries(file.providers)) {
    const apiKey = provider.apiKey === undefined ? undefined : substituteEnvironment(provider.apiKey, env);
    if (apiKey && !apiKey.ok) throw fail(`providers.${name}.apiKey`, `environment variable ${apiKey.missing.map((each) => `"${each}"`).join(', ')} is not set`);
    const headers = substituteEnvironmentInMap(provider.headers ?? {}, env);
    if (!headers.ok) throw fail(`providers.${name}.headers.${headers.problems[0]!.key}`, headers.problems[0]!.message);
    providers.set(name, {
      name,
      baseURL: provider.baseURL,
      ...(apiKey?.ok && apiKey.value ? { apiKey: apiKey.value } : {}),
      headers: headers.values,
      ...(provider.timeoutMs ? { timeoutMs: provider.timeoutMs } : {}),
      ...(provider.maxConcurrency ? { maxConcurrency: provider.maxConcurrency } : {}),
      allowDirect: provider.allowDirect ?? false,
      ...(provider.price ? { price: provider.price } : {}),
    });
  }
  const models: ModelSpec[] = Object.entries(file.models).map(([name, model]) => {
    const targets: Target[] = model.targets.map((target) => {
      const contextWindow = target.contextWindow ?? model.contextWindow;
      const price = target.price ?? model.price;
      return { provider: target.provider, model: target.model, ...(contextWindow ? { contextWindow } : {}), ...(price ? { price } : {}) };
    });
    const windows = targets.map((target) => target.contextWindow);
    const contextWindow = windows.every((window) => window !== undefined) ? Math.min(...(windows as number[])) : undefined;
    return { name, targets, ...(contextWindow ? { contextWindow } : {}), ...(model.price ? { price: model.price } : {}) };
  });
  return new ModelCatalogue(providers, models, file.defaultModel ?? models[0]!.name);
}

/** LLM_*: provider `default`, and the model LLM_MODEL on it; any other name goes to it too. */
export function environmentCatalogue(config: CatalogueConfig): ModelCatalogue {
  const provider: ProviderSpec = {
    name: DEFAULT_PROVIDER,
    baseURL: config.LLM_BASE_URL,
    ...(config.LLM_API_KEY ? { apiKey: config.LLM_API_KEY } : {}),
    headers: {},
    allowDirect: false,
    ...(config.LLM_PRICE ? { price: config.LLM_PRICE } : {}),
  };
  const window = config.LLM_CONTEXT_WINDOW ? { contextWindow: config.LLM_CONTEXT_WINDOW } : {};
  const price = config.LLM_PRICE ? { price: config.LLM_PRICE } : {};
  const model: ModelSpec = { name: config.LLM_MODEL, targets: [{ provider: DEFAULT_PROVIDER, model: config.LLM_MODEL, ...window, ...price }], ...window, ...price };
  return new ModelCatalogue(new Map([[DEFAULT_PROVIDER, provider]]), [model], config.LLM_MODEL, { provider: DEFAULT_PROVIDER, ...window, ...price });
}
