import OpenAI from 'openai';
import { zodResponseFormat, zodTextFormat } from 'openai/helpers/zod';
import { z } from 'zod';
import { followBatchEvents } from '../../support/batch-events';
import { openAiClient } from '../../support/openai-sdk';
import { WebhookReceiver } from '../../support/webhook-receiver';
import { markedScripted } from '../../support/scripted';
import { startToolTurnHarness, type ToolTurnHarness } from '../../support/tool-turns';

/** Settings honoured or refused, never dropped; structured output (docs/API.md, "OpenAI-compatible routes", "Structured output"). */
describe('settings and structured output', () => {
  let harness: ToolTurnHarness;
  let client: OpenAI;

  beforeAll(async () => {
    harness = await startToolTurnHarness({ env: { WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true', WEBHOOK_RELAY_INTERVAL_MS: '100' } });
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

  const city = {
    type: 'object',
    properties: { city: { type: 'string' }, population: { type: 'integer', minimum: 1 } },
    required: ['city', 'population'],
    additionalProperties: false,
  };
  const responseFormat = { type: 'json_schema', name: 'city', schema: city, strict: true };
  const turnDetail = async (turnId: string) => (await harness.api.get(`/v1/turns/${turnId}`)).body;

  it('runs a native turn with responseFormat through a tool call and gives its parsed output', async () => {
    const run = await harness.runTurn(
      { steps: [{ toolCalls: [{ name: 'calculator', arguments: { expression: '2+2' } }] }, {}] },
      { body: { tools: ['calculator'], responseFormat } },
    );
    const requests = harness.providerRequests(run.marker);
    expect(requests).toHaveLength(2);
    for (const request of requests) expect(request.response_format).toEqual({ type: 'json_schema', json_schema: { name: 'city', schema: city, strict: true } });
    const turn = await turnDetail(run.turnId);
    expect(turn).toMatchObject({ status: 'completed', finishReason: 'stop', output: { city: 'example', population: 1 } });
    expect(turn.toolCalls).toHaveLength(1);
  });

  it('asks again with the validation errors after an answer that does not fit, and withdraws the rejected one', async () => {
    const run = await harness.runTurn({ invalidOutput: true }, { body: { responseFormat } });
    const turn = await turnDetail(run.turnId);
    expect(turn).toMatchObject({ status: 'completed', output: { city: 'example', population: 1 } });
    expect(turn.providerCalls.map((call: any) => [call.kind, call.outcome])).toEqual([
      ['step', 'discarded'],
      ['repair', 'ok'],
    ]);
    const [, repair] = harness.providerRequests(run.marker);
    expect(repair.messages.at(-2)).toEqual({ role: 'assistant', content: JSON.stringify({ population: 1 }) });
    expect(repair.messages.at(-1).content).toContain('"city" is required');
    expect(run.events.map((event) => event.type)).toContain('attempt-discarded');
    // The rejected answer is in no stored message: the conversation holds the one that validated.
    const conversation = (await harness.api.get(`/v1/conversations/${run.conversationId}`)).body;
    expect(conversation.messages.filter((message: any) => message.role === 'assistant').map((message: any) => message.content)).toEqual([
      JSON.stringify({ city: 'example', population: 1 }),
    ]);
  });

  it('fails the turn invalid_output with the errors once its repairs are spent', async () => {
    const run = await harness.runTurn({ steps: [{ invalidOutput: true }, { text: 'not json at all' }] }, { body: { responseFormat } });
    const turn = await turnDetail(run.turnId);
    expect(turn).toMatchObject({ status: 'failed', error: { code: 'invalid_output' } });
    expect(turn.error.details.problems).toHaveLength(2);
    expect(turn.error.details.problems[0]).toContain('"city" is required');
    expect(turn.error.details.problems[1]).toContain('not JSON');
    expect(turn.output).toBeUndefined();
    const none = await harness.runTurn({ invalidOutput: true }, { body: { responseFormat: { ...responseFormat, repairAttempts: 0 } } });
    expect(await turnDetail(none.turnId)).toMatchObject({ status: 'failed', error: { code: 'invalid_output' } });
    expect(harness.providerRequests(none.marker)).toHaveLength(1);
  });

  it('refuses a responseFormat whose schema is no JSON Schema, on a turn and a conversation', async () => {
    const broken = { type: 'json_schema', name: 'broken', schema: { type: 'no-such-type' } };
    const onTurn = await harness.api.post(`/v1/conversations/${await harness.newConversation()}/turns`, { content: 'hi', responseFormat: broken });
    expect(onTurn.status).toBe(400);
    expect(onTurn.body.error).toMatchObject({ code: 'invalid_request', details: [{ field: 'responseFormat.schema' }] });
    expect((await harness.api.post('/v1/conversations', { responseFormat: broken })).status).toBe(400);
  });

  it("takes a conversation's responseFormat for its turns", async () => {
    const run = await harness.runTurn({}, { conversation: { responseFormat: { type: 'json_object' } } });
    expect(await turnDetail(run.turnId)).toMatchObject({ status: 'completed', output: {} });
  });

  const City = z.object({ city: z.string(), population: z.number().int().min(1), tags: z.array(z.string()) });

  it('returns the parsed object from chat.completions.parse, repaired where the first answer did not fit', async () => {
    const completion = await client.chat.completions.parse({
      model: 'scripted',
      messages: [{ role: 'user', content: markedScripted({ invalidOutput: true }) }],
      response_format: zodResponseFormat(City, 'city'),
    });
    expect(completion.choices[0]!.message.parsed).toEqual({ city: 'example', population: 1, tags: ['example'] });
    const { switchyard } = completion as unknown as { switchyard: { turnId: string } };
    expect((await turnDetail(switchyard.turnId)).providerCalls.map((call: any) => call.kind)).toEqual(['step', 'repair']);
  });

  it('returns output_parsed from responses.parse with a zod text format', async () => {
    const response = await client.responses.parse({ model: 'scripted', input: markedScripted({ tokenDelayMs: 0 }), text: { format: zodTextFormat(City, 'city') } });
    expect(response.output_parsed).toEqual({ city: 'example', population: 1, tags: ['example'] });
    expect(response.text?.format).toMatchObject({ type: 'json_schema', name: 'city' });
  });

  it('carries output in batch results, and invalid_output for an item whose repairs are spent', async () => {
    const marker = `batch-format-${Date.now()}`;
    const submitted = await harness.api.post('/v1/batches', {
      defaults: { responseFormat },
      items: [
        { customId: 'fits', messages: [markedScripted({}, `${marker}-fits`)] },
        { customId: 'never', messages: [markedScripted({ steps: [{ invalidOutput: true }, { invalidOutput: true }] }, `${marker}-never`)] },
      ],
    });
    expect(submitted.status).toBe(202);
    const batchId = submitted.body.batchId as string;
    const events = await followBatchEvents(harness.stack.url, harness.apiKey, batchId);
    try {
      await events.finished();
    } finally {
      events.close();
    }
    const results = await fetch(`${harness.stack.url}/v1/batches/${batchId}/results`, { headers: { authorization: `Bearer ${harness.apiKey}` } });
    const lines = (await results.text())
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line));
    expect(lines[0]).toMatchObject({ customId: 'fits', status: 'succeeded', output: { city: 'example', population: 1 } });
    expect(lines[1]).toMatchObject({ customId: 'never', status: 'failed', error: { code: 'invalid_output' } });
    expect(lines[1].output).toBeUndefined();
  });

  it('refuses what Chat Completions cannot honour, also in a parse call', async () => {
    const refused = await refusal(
      client.chat.completions.parse({ model: 'scripted', messages: [{ role: 'user', content: 'hi' }], response_format: zodResponseFormat(City, 'city'), n: 2 }),
    );
    expect(refused).toMatchObject({ code: 'unsupported_parameter', param: 'n' });
  });

  it("carries output in the turn's webhook", async () => {
    const receiver = await WebhookReceiver.start();
    try {
      expect((await harness.api.post('/v1/webhooks', { url: receiver.url(), events: ['turn.completed'] })).status).toBe(201);
      const run = await harness.runTurn({}, { body: { responseFormat } });
      const [webhook] = await receiver.waitFor(1, (received) => received.json?.data?.turnId === run.turnId);
      expect(webhook!.json.data).toMatchObject({ status: 'completed', output: { city: 'example', population: 1 } });
    } finally {
      await receiver.close();
    }
  });
});
