import OpenAI, { APIConnectionError, APIError } from 'openai';
import { FAULT_PATH, startScriptedModel, type ScriptedModel } from '../../../src/scripted-model/scripted-model-server';
import { scripted } from '../../support/scripted';

/** Two scripted models as two providers: faults set on one, on demand, whatever the scenario says. */
describe('faults on demand', () => {
  let first: ScriptedModel;
  let second: ScriptedModel;
  const clientOf = (model: ScriptedModel, timeout = 10_000) => new OpenAI({ baseURL: model.url, apiKey: 'x', maxRetries: 0, timeout });
  const ask = (model: ScriptedModel, text = 'one two three four five six', timeout?: number) =>
    clientOf(model, timeout).chat.completions.create({ model: 'scripted', stream: true, messages: [{ role: 'user', content: scripted({ text }) }] });
  async function read(stream: AsyncIterable<OpenAI.Chat.ChatCompletionChunk>): Promise<{ text: string; error?: unknown }> {
    let text = '';
    try {
      for await (const chunk of stream) text += chunk.choices[0]?.delta.content ?? '';
      return { text };
    } catch (error) {
      return { text, error };
    }
  }

  beforeAll(async () => {
    [first, second] = await Promise.all([startScriptedModel(), startScriptedModel()]);
  });
  afterEach(() => {
    first.setFault(null);
    second.setFault(null);
  });
  afterAll(async () => {
    await first.close();
    await second.close();
  });

  it('refuses with a status (and Retry-After) while the other model answers', async () => {
    first.setFault({ refuse: { status: 503, retryAfterSeconds: 7 } });
    const refused = await ask(first).catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(APIError);
    expect((refused as APIError).status).toBe(503);
    expect((refused as APIError).headers?.get('retry-after')).toBe('7');
    expect((await read(await ask(second))).text).toBe('one two three four five six');
    // Recorded like any request: a test counts what reached each provider.
    expect(first.requests).toHaveLength(1);
  });

  it('cuts a stream after K tokens, and stops after `times` requests', async () => {
    first.setFault({ cutAfterTokens: 2, times: 1 });
    const cut = await read(await ask(first));
    expect(cut.text).toBe('one two');
    expect(cut.error).toBeDefined();
    expect((await read(await ask(first))).text).toBe('one two three four five six');
  });

  it('hangs without sending headers until the client gives up', async () => {
    first.setFault({ hang: true });
    await expect(ask(first, 'never', 300)).rejects.toBeInstanceOf(APIConnectionError);
  });

  it('is set, shown and cleared over HTTP, and a fault that is not one is a 400 naming what is wrong', async () => {
    const base = first.url.replace(/\/v1$/, '');
    const put = await fetch(`${base}${FAULT_PATH}`, { method: 'PUT', body: JSON.stringify({ stallAfterTokens: 1 }) });
    expect(await put.json()).toEqual({ fault: { stallAfterTokens: 1 } });
    expect(await (await fetch(`${base}${FAULT_PATH}`)).json()).toEqual({ fault: { stallAfterTokens: 1 } });
    const bad = await fetch(`${base}${FAULT_PATH}`, { method: 'PUT', body: JSON.stringify({ refuse: { status: 200 } }) });
    expect(bad.status).toBe(400);
    expect(((await bad.json()) as { error: { message: string } }).error.message).toContain('"refuse.status"');
    expect(await (await fetch(`${base}${FAULT_PATH}`, { method: 'DELETE' })).json()).toEqual({ fault: null });
    expect((await read(await ask(first))).text).toBe('one two three four five six');
  });
});
