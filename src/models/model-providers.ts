import type { ModelProvider } from '../providers/model-provider';
import { createOpenAiCompatibleProvider, type OpenAiCompatibleOptions } from '../providers/openai-compatible-provider';
import type { LoopSlices } from '../providers/loop-slices';
import type { ModelCatalogue } from './model-catalogue';
import { ProviderSlots } from './provider-slots';

/** A provider as a worker process calls it: its client, where it is, its timeout and its slots. */
export interface ConnectedProvider {
  name: string;
  provider: ModelProvider;
  baseURL: string;
  /** No data for this long fails a request (the provider's `timeoutMs`, else PROVIDER_IDLE_TIMEOUT_MS). */
  timeoutMs: number;
  slots: ProviderSlots;
}

export interface ModelProvidersOptions {
  idleTimeoutMs: number;
  slices: LoopSlices;
  /** The LLM_* provider's URL when LLM_BASE_URL is unset: the scripted model this process runs. */
  fallbackUrl?: string;
  /** Told what each completion request got back (metrics), with the provider's name. */
  onRequest?: (provider: string, status: Parameters<NonNullable<OpenAiCompatibleOptions['onRequest']>>[0]) => void;
}

/** One client per provider of the catalogue; a provider with no URL (LLM_* unset, no scripted model) is left out. */
export function connectModelProviders(catalogue: ModelCatalogue, options: ModelProvidersOptions): Map<string, ConnectedProvider> {
  const connected = new Map<string, ConnectedProvider>();
  for (const spec of catalogue.providers.values()) {
    const baseURL = spec.baseURL ?? options.fallbackUrl;
    if (!baseURL) continue;
    const timeoutMs = spec.timeoutMs ?? options.idleTimeoutMs;
    const onRequest = options.onRequest;
    const provider = createOpenAiCompatibleProvider({
      baseURL,
      ...(spec.apiKey ? { apiKey: spec.apiKey } : {}),
      ...(Object.keys(spec.headers).length > 0 ? { headers: spec.headers } : {}),
      idleTimeoutMs: timeoutMs,
      slices: options.slices,
      ...(onRequest ? { onRequest: (status) => onRequest(spec.name, status) } : {}),
    });
    connected.set(spec.name, { name: spec.name, provider, baseURL, timeoutMs, slots: new ProviderSlots(spec.maxConcurrency) });
  }
  return connected;
}
