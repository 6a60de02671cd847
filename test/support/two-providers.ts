import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { startScriptedModel, type ScriptedModel } from '../../src/scripted-model/scripted-model-server';
import { startTestStack, type TestStack, type TestStackOptions } from './stack';

/**
 * A stack whose models file names two scripted models as providers `first` and `second`:
 * model `duo` tries first then second, `solo` first alone, `wide` first (a 1,000-token window)
 * then second (100,000 tokens); `defaultModel` is duo. Faults are set on either
 * (`first.setFault(...)`); `healTargets` forgets every cooldown.
 */
export interface TwoProviderStack {
  stack: TestStack;
  first: ScriptedModel;
  second: ScriptedModel;
  modelsFile: string;
  healTargets(): Promise<void>;
  close(): Promise<void>;
}

export async function startTwoProviderStack(
  options: TestStackOptions & { providers?: { first?: Record<string, unknown>; second?: Record<string, unknown> }; models?: Record<string, unknown> } = {},
): Promise<TwoProviderStack> {
  const [first, second] = await Promise.all([startScriptedModel(), startScriptedModel()]);
  const dir = await mkdtemp(path.join(os.tmpdir(), 'switchyard-models-'));
  const modelsFile = path.join(dir, 'models.json');
  const file = modelsFileFor(first.url, second.url, options.providers);
  await writeFile(modelsFile, JSON.stringify({ ...file, models: { ...file.models, ...options.models } }));
  const stack = await startTestStack({ ...options, scripted: first, env: { MODELS_FILE: modelsFile, ...options.env } });
  return {
    stack,
    first,
    second,
    modelsFile,
    healTargets: async () => {
      await stack.resources.redis.del(`${stack.config.REDIS_PREFIX}:model-targets`);
    },
    async close() {
      await stack.close();
      await first.close();
      await second.close();
      await rm(dir, { recursive: true, force: true });
    },
  };
}

export function modelsFileFor(firstUrl: string, secondUrl: string, extra: { first?: Record<string, unknown>; second?: Record<string, unknown> } = {}) {
  return {
    providers: { first: { baseURL: firstUrl, ...extra.first }, second: { baseURL: secondUrl, ...extra.second } },
    models: {
      duo: {
        targets: [
          { provider: 'first', model: 'scripted' },
          { provider: 'second', model: 'scripted' },
        ],
      },
      solo: { targets: [{ provider: 'first', model: 'scripted' }] },
      wide: {
        targets: [
          { provider: 'first', model: 'scripted', contextWindow: 1000 },
          { provider: 'second', model: 'scripted', contextWindow: 100_000 },
        ],
      },
    },
    defaultModel: 'duo',
  };
}

/** The requests a scripted model got for the turn whose user message carries `marker`. */
export const requestsWith = (model: ScriptedModel, marker: string) => model.requests.filter((request) => JSON.stringify(request.body).includes(marker));
