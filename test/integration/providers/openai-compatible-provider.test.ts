import { createOpenAiCompatibleProvider } from '../../../src/providers/openai-compatible-provider';
import type { ModelProvider, ProviderChunk } from '../../../src/providers/model-provider';
import { ProviderError } from '../../../src/providers/provider-error';
import { startScriptedModel, type ScriptedModel } from '../../../src/scripted-model/scripted-model-server';
import { markedScripted } from '../../support/scripted';

/** The adapter alone against the scripted model over HTTP: what a stream ends as, and what reaches the model. */
describe('the OpenAI-compatible provider', () => {
  // Long enough that a busy machine's first response never looks silent.
  const IDLE_TIMEOUT_MS = 2_000;
  let scripted: ScriptedModel;
  let provider: ModelProvider;

  beforeAll(async () => {
    scripted = await startScriptedModel();
    provider = createOpenAiCompatibleProvider({ baseURL: scripted.url, idleTimeoutMs: IDLE_TIMEOUT_MS });
  });
  afterAll(() => scripted.close());

  const request = (scenario: unknown, marker = `m-${Math.random().toString(36).slice(2)}`) => ({
    model: 'scripted',
    messages: [{ role: 'user' as const, content: markedScripted(scenario, marker) }],
  });
  const requestsWith = (marker: string) => scripted.requests.filter((recorded) => JSON.stringify(recorded.body).includes(marker));

  async function consume(stream: AsyncIterable<ProviderChunk>, onChunk?: (chunk: ProviderChunk) => void) {
    const chunks: ProviderChunk[] = [];
    try {
      for await (const chunk of stream) {
        chunks.push(chunk);
        onChunk?.(chunk);
      }
      return { chunks, error: undefined };
    } catch (error) {
      return { chunks, error: error as ProviderError };
    }
  }

  it('streams text, then one finish with the usage', async () => {
    const { chunks, error } = await consume(provider.stream(request({ text: 'Hello there.' }), new AbortController().signal));
    expect(error).toBeUndefined();
    expect(
      chunks
        .filter((chunk) => chunk.type === 'text')
        .map((chunk) => (chunk as { delta: string }).delta)
        .join(''),
    ).toBe('Hello there.');
    expect(chunks.at(-1)).toMatchObject({ type: 'finish', finishReason: 'stop', usage: { completionTokens: 3 } });
  });

  it('sends one request for a 503: the SDK does not retry on its own', async () => {
    const marker = 'm-503-once';
    const { error } = await consume(provider.stream(request({ error: { status: 503 } }, marker), new AbortController().signal));
    expect(error).toMatchObject({ kind: 'server', status: 503 });
    expect(requestsWith(marker)).toHaveLength(1);
  });

  it('ends a stream that goes silent as idle_timeout', async () => {
    const startedAt = Date.now();
    const { chunks, error } = await consume(provider.stream(request({ text: 'one two three', stallAfterTokens: 2 }), new AbortController().signal));
    expect(chunks.map((chunk) => chunk.type)).toEqual(['text', 'text']);
    expect(error).toMatchObject({ kind: 'idle_timeout', retryable: true });
    expect(Date.now() - startedAt).toBeGreaterThanOrEqual(IDLE_TIMEOUT_MS);
  });

  it('ends a stream its caller aborts as aborted, not as a provider fault', async () => {
    const controller = new AbortController();
    const { error } = await consume(provider.stream(request({ tokens: 500, tokenDelayMs: 5 }), controller.signal), () => controller.abort());
    expect(error).toMatchObject({ kind: 'aborted', retryable: false });
  });

  it('sends nothing when the caller had aborted already', async () => {
    const marker = 'm-aborted-before';
    const { error } = await consume(provider.stream(request({ text: 'never' }, marker), AbortSignal.abort()));
    expect(error).toMatchObject({ kind: 'aborted' });
    expect(requestsWith(marker)).toHaveLength(0);
  });
});
