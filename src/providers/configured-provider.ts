import type { Config } from '../config/config';
import { LoopSlices } from './loop-slices';
import type { ModelProvider } from './model-provider';
import { createOpenAiCompatibleProvider, type OpenAiCompatibleOptions } from './openai-compatible-provider';

/** What of the config a provider is built from. */
export type ProviderConfig = Pick<Config, 'LLM_BASE_URL' | 'LLM_API_KEY' | 'PROVIDER_IDLE_TIMEOUT_MS' | 'STREAM_READ_SLICE_MS'>;

export interface ConfiguredProvider {
  provider: ModelProvider;
  /** Where it sends its requests (spans name it as the server). */
  baseURL: string;
}

/**
 * The model provider of a process, the one way every process builds it: at LLM_BASE_URL, else
 * at `fallbackUrl` (the scripted model a worker runs when LLM_BASE_URL is unset); null when
 * neither names one. `onRequest` is told what each completion request got back (metrics).
 */
export function configuredProvider(config: ProviderConfig, options: { fallbackUrl?: string; onRequest?: OpenAiCompatibleOptions['onRequest'] } = {}): ConfiguredProvider | null {
  const baseURL = config.LLM_BASE_URL ?? options.fallbackUrl;
  if (!baseURL) return null;
  const provider = createOpenAiCompatibleProvider({
    baseURL,
    ...(config.LLM_API_KEY ? { apiKey: config.LLM_API_KEY } : {}),
    idleTimeoutMs: config.PROVIDER_IDLE_TIMEOUT_MS,
    ...(options.onRequest ? { onRequest: options.onRequest } : {}),
    slices: new LoopSlices(config.STREAM_READ_SLICE_MS),
  });
  return { provider, baseURL };
}
