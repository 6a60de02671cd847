import { environmentCatalogue, ModelsFileError, parseModelsFile } from '../../../src/models/load-model-catalogue';
import { loadConfig } from '../../../src/config/config';

const FILE = '/etc/switchyard/models.json';

const example = {
  providers: {
    groq: { baseURL: 'https://api.groq.com/openai/v1', apiKey: '${GROQ_API_KEY}', maxConcurrency: 64 },
    openai: { baseURL: 'https://api.openai.com/v1', apiKey: '${OPENAI_API_KEY}', timeoutMs: 60000, headers: { 'OpenAI-Project': '${PROJECT}' }, allowDirect: true },
  },
  models: {
    fast: {
      targets: [
        { provider: 'groq', model: 'llama-3.3-70b-versatile' },
        { provider: 'openai', model: 'gpt-4.1-mini', contextWindow: 1047576 },
      ],
      contextWindow: 131072,
      price: { input: 0.59, cachedInput: 0.59, output: 0.79 },
    },
    smart: { targets: [{ provider: 'openai', model: 'gpt-4.1' }], contextWindow: 1047576, price: { input: 2, cachedInput: 0.5, output: 8 } },
  },
  defaultModel: 'fast',
};
const env = { GROQ_API_KEY: 'gsk-secret', OPENAI_API_KEY: 'sk-secret', PROJECT: 'proj_1' };

function refusal(file: unknown, environment: Record<string, string> = env): string {
  try {
    parseModelsFile(typeof file === 'string' ? file : JSON.stringify(file), FILE, environment);
  } catch (error) {
    expect(error).toBeInstanceOf(ModelsFileError);
    return (error as Error).message;
  }
  throw new Error('the file was accepted');
}

describe('a models file', () => {
  it("reads API.md's example: providers with their keys and headers from the environment, models with their targets in order", () => {
    const catalogue = parseModelsFile(JSON.stringify(example), FILE, env);
    expect(catalogue.defaultModel).toBe('fast');
    expect(catalogue.providers.get('groq')).toMatchObject({ baseURL: 'https://api.groq.com/openai/v1', apiKey: 'gsk-secret', maxConcurrency: 64, allowDirect: false });
    expect(catalogue.providers.get('openai')).toMatchObject({ apiKey: 'sk-secret', headers: { 'OpenAI-Project': 'proj_1' }, timeoutMs: 60000, allowDirect: true });
    const fast = catalogue.lookup('fast');
    expect(fast).toEqual({
      ok: true,
      route: {
        name: 'fast',
        targets: [
          // A target takes the model's window and price unless it has its own.
          { provider: 'groq', model: 'llama-3.3-70b-versatile', contextWindow: 131072, price: example.models.fast.price },
          { provider: 'openai', model: 'gpt-4.1-mini', contextWindow: 1047576, price: example.models.fast.price },
        ],
      },
    });
    // A model's window is the smallest of its targets'.
    expect(catalogue.models.find((model) => model.name === 'fast')!.contextWindow).toBe(131072);
  });

  it('calls a provider directly as <provider>/<model> only where it allows it, and names the models there are otherwise', () => {
    const catalogue = parseModelsFile(JSON.stringify(example), FILE, env);
    expect(catalogue.lookup('openai/gpt-4o')).toEqual({ ok: true, route: { name: 'openai/gpt-4o', targets: [{ provider: 'openai', model: 'gpt-4o' }] } });
    const refused = catalogue.lookup('groq/llama');
    expect(refused).toEqual({ ok: false, message: 'no model "groq/llama": the models are fast, smart, openai/<model>' });
    expect(catalogue.lookup('gpt-4').ok).toBe(false);
  });

  it('takes the first model as the default when it names none', () => {
    const { defaultModel: _default, ...rest } = example;
    expect(parseModelsFile(JSON.stringify(rest), FILE, env).defaultModel).toBe('fast');
  });

  it.each([
    ['not JSON', '{"providers": ', /^models file \/etc\/switchyard\/models\.json: not valid JSON \(/],
    [
      'a misspelt field',
      { ...example, providers: { ...example.providers, groq: { ...example.providers.groq, maxConcurency: 3 } } },
      /: "providers\.groq\.maxConcurency" is not a known field$/,
    ],
    ['a bad URL', { ...example, providers: { groq: { baseURL: 'groq.com' }, openai: example.providers.openai } }, /: "providers\.groq\.baseURL": an http:\/\/ or https:\/\/ URL$/],
    [
      'a target of no provider',
      { ...example, models: { fast: { targets: [{ provider: 'grok', model: 'x' }] } }, defaultModel: 'fast' },
      /: "models\.fast\.targets\[0\]\.provider": no provider "grok" \(the providers are groq, openai\)$/,
    ],
    ['a model without targets', { ...example, models: { fast: { targets: [] } } }, /: "models\.fast\.targets": needs at least one target$/],
    ['a default that is no model', { ...example, defaultModel: 'fastest' }, /: "defaultModel": no model "fastest" \(the models are fast, smart\)$/],
    ['a provider name with a slash', { ...example, providers: { 'a/b': example.providers.groq } }, /: "providers\.a\/b": a provider name is letters, digits/],
    [
      'a negative price',
      { ...example, models: { fast: { targets: [{ provider: 'groq', model: 'x' }], price: { input: -1, cachedInput: 0, output: 0 } } }, defaultModel: 'fast' },
      /: "models\.fast\.price\.input": /,
    ],
  ])('stops on %s with one line naming the file and the field', (_name, file, message) => {
    const line = refusal(file);
    expect(line).toMatch(message);
    expect(line.startsWith(`models file ${FILE}: `)).toBe(true);
    expect(line).not.toContain('\n');
  });

  it('names an unset ${VAR} of a key or a header, and never prints a value', () => {
    expect(refusal(example, { OPENAI_API_KEY: 'sk-secret', PROJECT: 'p' })).toBe(`models file ${FILE}: "providers.groq.apiKey": environment variable "GROQ_API_KEY" is not set`);
    const line = refusal(example, { GROQ_API_KEY: 'gsk-secret', OPENAI_API_KEY: 'sk-secret' });
    expect(line).toBe(`models file ${FILE}: "providers.openai.headers.OpenAI-Project": environment variable "PROJECT" is not set`);
    expect(line).not.toContain('secret');
  });
});

describe('the LLM_* provider', () => {
  it('is provider default, taking any model name as it is, with LLM_CONTEXT_WINDOW and LLM_PRICE', () => {
    const config = loadConfig({ LLM_BASE_URL: 'http://127.0.0.1:9/v1', LLM_MODEL: 'llama3', LLM_CONTEXT_WINDOW: '8192', LLM_PRICE: '0.15, 0.075,0.6' });
    const catalogue = environmentCatalogue(config);
    const price = { input: 0.15, cachedInput: 0.075, output: 0.6 };
    expect(catalogue.defaultModel).toBe('llama3');
    expect(catalogue.models).toEqual([{ name: 'llama3', targets: [{ provider: 'default', model: 'llama3', contextWindow: 8192, price }], contextWindow: 8192, price }]);
    expect(catalogue.lookup('mistral')).toEqual({ ok: true, route: { name: 'mistral', targets: [{ provider: 'default', model: 'mistral', contextWindow: 8192, price }] } });
    expect(catalogue.providers.get('default')).toMatchObject({ baseURL: 'http://127.0.0.1:9/v1' });
  });

  it('refuses an LLM_PRICE that is not three numbers, naming it', () => {
    expect(() => loadConfig({ LLM_PRICE: '0.15,0.6' })).toThrow(/"LLM_PRICE": input,cachedInput,output/);
  });
});
