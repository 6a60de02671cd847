import OpenAI from 'openai';
import { followBatchEvents } from '../../support/batch-events';
import { openAiClient } from '../../support/openai-sdk';
import { markedScripted } from '../../support/scripted';
import { startToolTurnHarness, type ToolTurnHarness } from '../../support/tool-turns';

/** Settings honoured or refused, never dropped; structured output (docs/API.md, "OpenAI-compatible routes", "Structured output"). */
describe('settings and structured output', () => {
  let harness: ToolTurnHarness;
  let client: OpenAI;

  beforeAll(async () => {
    harness = await startToolTurnHarness();
    client = openAiClient(harness.stack.url, harness.apiKey);
  });
  afterAll(() => harness.close());

  /** The provider requests whose body carries this marker. */
  const providerRequests = (marker: string) => harness.stack.scripted.requests.map((request) => request.body as any).filter((body) => JSON.stringify(body).includes(marker));
  const twoSteps = { steps: [{ toolCalls: [{ name: 'calculator', arguments: { expression: '1+1' } }] }, { text: 'Two.' }] };

  const refusal = async (made: Promise<unknown>) => {
    const error = await made.then(
      () => undefined,
      (thrown: unknown) => thrown,
    );
    expect(error).toBeInstanceOf(OpenAI.BadRequestError);
    return (error as InstanceType<typeof OpenAI.BadRequestError>).error as { code: string; param: string };
  };

  it("sends a response's settings to the provider on every step of its turn", async () => {
    const marker = `responses-settings-${Date.now()}`;
    const response = await client.responses.create({
      model: 'scripted',
      input: markedScripted(twoSteps, marker),
      tools: [{ type: 'function', name: 'calculator' } as unknown as OpenAI.Responses.FunctionTool],
      temperature: 0.4,
      top_p: 0.8,
      max_output_tokens: 55,
      parallel_tool_calls: false,
      reasoning: { effort: 'low' },
    });
    expect(response).toMatchObject({ status: 'completed', temperature: 0.4, top_p: 0.8, max_output_tokens: 55, parallel_tool_calls: false });
    const requests = providerRequests(marker);
    expect(requests).toHaveLength(2);
    for (const request of requests) expect(request).toMatchObject({ temperature: 0.4, top_p: 0.8, max_tokens: 55, parallel_tool_calls: false, reasoning_effort: 'low' });
  });

  it('refuses what a response cannot honour with 400 unsupported_parameter naming it', async () => {
    const create = (body: Record<string, unknown>) => client.responses.create({ model: 'scripted', input: 'hi', ...body } as never);
    expect(await refusal(create({ tools: [{ type: 'web_search' }] }))).toMatchObject({ code: 'unsupported_parameter', param: 'tools' });
    expect(await refusal(create({ top_logprobs: 3 }))).toMatchObject({ code: 'unsupported_parameter', param: 'top_logprobs' });
    expect(await refusal(create({ include: ['message.output_text.logprobs'] }))).toMatchObject({ code: 'unsupported_parameter', param: 'include' });
    expect(await refusal(create({ max_tool_calls: 2 }))).toMatchObject({ code: 'unsupported_parameter', param: 'max_tool_calls' });
  });

  it('takes modelSettings on a conversation and on a turn, the turn winning field by field', async () => {
    const { marker } = await harness.runTurn(twoSteps, {
      conversation: { modelSettings: { temperature: 0.1, seed: 3, max_tokens: 40 } },
      body: { tools: ['calculator'], modelSettings: { temperature: 0.9, stop: ['END'] } },
    });
    const requests = harness.providerRequests(marker);
    expect(requests).toHaveLength(2);
    for (const request of requests) expect(request).toMatchObject({ temperature: 0.9, seed: 3, max_tokens: 40, stop: ['END'] });
    const refused = await harness.api.post(`/v1/conversations/${await harness.newConversation()}/turns`, { content: 'hi', modelSettings: { n: 2 } });
    expect(refused.status).toBe(400);
    expect(refused.body.error.code).toBe('invalid_request');
  });

  it("runs a batch item with the batch's defaults.modelSettings, and an OpenAI batch line with its body's settings", async () => {
    const marker = `batch-settings-${Date.now()}`;
    const submitted = await harness.api.post('/v1/batches', {
      defaults: { modelSettings: { temperature: 0.2, max_tokens: 33 } },
      items: [
        { messages: [markedScripted({ text: 'a' }, `${marker}-native`)] },
        {
          custom_id: 'line',
          method: 'POST',
          url: '/v1/chat/completions',
          body: { model: 'scripted', messages: [{ role: 'user', content: markedScripted({ text: 'b' }, `${marker}-line`) }], temperature: 0.7, max_tokens: 12 },
        },
      ],
    });
    expect(submitted.status).toBe(202);
    const events = await followBatchEvents(harness.stack.url, harness.apiKey, submitted.body.batchId as string);
    try {
      expect(await events.finished()).toMatchObject({ status: 'completed', counts: { succeeded: 2 } });
    } finally {
      events.close();
    }
    expect(providerRequests(`${marker}-native`)[0]).toMatchObject({ temperature: 0.2, max_tokens: 33 });
    expect(providerRequests(`${marker}-line`)[0]).toMatchObject({ temperature: 0.7, max_tokens: 12 });
  });
});
