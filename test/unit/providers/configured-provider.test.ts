import { configuredProvider, type ProviderConfig } from '../../../src/providers/configured-provider';

const config = (overrides: Partial<ProviderConfig>): ProviderConfig => ({ PROVIDER_IDLE_TIMEOUT_MS: 60_000, STREAM_READ_SLICE_MS: 2, ...overrides });

describe('configuredProvider', () => {
  it('sends to LLM_BASE_URL when it is set, whatever the fallback', () => {
    expect(configuredProvider(config({ LLM_BASE_URL: 'http://model.test/v1' }), { fallbackUrl: 'http://127.0.0.1:9/v1' })?.baseURL).toBe('http://model.test/v1');
  });

  it('falls back to the given model when LLM_BASE_URL is unset', () => {
    const configured = configuredProvider(config({}), { fallbackUrl: 'http://127.0.0.1:9/v1' });
    expect(configured?.baseURL).toBe('http://127.0.0.1:9/v1');
    expect(configured?.provider).toBeDefined();
  });

  it('builds none when nothing names a model', () => {
    expect(configuredProvider(config({}))).toBeNull();
  });
});
