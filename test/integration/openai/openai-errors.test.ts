import OpenAI from 'openai';
import { openAiClient } from '../../support/openai-sdk';
import { scripted } from '../../support/scripted';
import { startTestStack, type TestStack } from '../../support/stack';

/** Errors of `/openai/v1` in OpenAI's shape, with the statuses its SDK maps to its error classes. */
describe('OpenAI-compatible errors', () => {
  let stack: TestStack;
  let client: OpenAI;

  beforeAll(async () => {
    stack = await startTestStack({ workers: 1, env: { MAX_BODY_BYTES: '4096', RATE_LIMIT_PER_MINUTE: '40' } });
    client = openAiClient(stack.url, (await stack.createUser('errors')).apiKey);
  });
  afterAll(() => stack.close());

  const caught = (promise: Promise<unknown>) =>
    promise.then(
      () => {
        throw new Error('expected an error');
      },
      (error: unknown) => error as InstanceType<typeof OpenAI.APIError>,
    );

  it('400 BadRequestError naming the param; 401 AuthenticationError; 404 NotFoundError; 409 ConflictError; 413', async () => {
    const bad = await caught(client.responses.create({ input: 'hi', colour: 'red' } as never));
    expect(bad).toBeInstanceOf(OpenAI.BadRequestError);
    expect(bad.error).toMatchObject({ type: 'invalid_request_error', param: 'colour', code: 'invalid_request' });

    const unauthorized = await caught(openAiClient(stack.url, 'sy_wrong').responses.create({ input: 'hi' }));
    expect(unauthorized).toBeInstanceOf(OpenAI.AuthenticationError);
    expect(unauthorized.error).toMatchObject({ code: 'invalid_api_key' });

    expect(await caught(client.responses.retrieve('resp_nobody'))).toBeInstanceOf(OpenAI.NotFoundError);
    const route = await fetch(`${stack.url}/openai/v1/embeddings`, { method: 'POST', headers: { authorization: `Bearer ${client.apiKey}` } });
    expect(route.status).toBe(404);
    expect(((await route.json()) as any).error).toMatchObject({ type: 'invalid_request_error', code: 'not_found' });

    const running = await client.responses.create({ input: scripted({ tokens: 2000, tokenDelayMs: 20 }), background: true });
    const busy = await caught(client.responses.create({ input: 'next', previous_response_id: running.id }));
    expect(busy).toBeInstanceOf(OpenAI.ConflictError);
    await client.responses.cancel(running.id);

    const large = await caught(client.responses.create({ input: 'x'.repeat(8192) }));
    expect(large.status).toBe(413);
    expect(large.error).toMatchObject({ type: 'invalid_request_error', code: 'payload_too_large' });
  });

  it('429 RateLimitError with retry-after', async () => {
    let limited: InstanceType<typeof OpenAI.APIError> | undefined;
    for (let i = 0; i < 60 && !limited; i++) {
      const error = await client.files.list().then(
        () => undefined,
        (thrown: unknown) => thrown as InstanceType<typeof OpenAI.APIError>,
      );
      if (error) limited = error;
    }
    expect(limited).toBeInstanceOf(OpenAI.RateLimitError);
    expect(Number(limited!.headers?.get('retry-after'))).toBeGreaterThan(0);
    expect(limited!.error).toMatchObject({ type: 'requests', code: 'rate_limit_exceeded' });
  });
});
