import OpenAI from 'openai';
import { openAiClient } from '../support/openai-sdk';
import { startPrivateRedis, type PrivateRedis } from '../support/redis-server';
import { scripted } from '../support/scripted';
import { startTestStack, type TestStack } from '../support/stack';

/** docs/RELIABILITY.md case 8 through `/openai/v1`: OpenAI's SDK gets a 503 with Retry-After, in OpenAI's shape. */
describe('OpenAI-compatible routes while Redis is unreachable', () => {
  let redis: PrivateRedis;
  let stack: TestStack;

  beforeAll(async () => {
    redis = await startPrivateRedis();
    stack = await startTestStack({ env: { LOCK_DURATION_MS: '2000', STALLED_INTERVAL_MS: '500', REDIS_URL: redis.url } });
  });
  afterAll(async () => {
    await stack.close();
    await redis.close();
  });

  it("answers a new response 503 (the SDK's InternalServerError) with retry-after, and works again once Redis is back", async () => {
    const { apiKey } = await stack.createUser('outage');
    const client = openAiClient(stack.url, apiKey);
    await redis.stop();
    let error: unknown;
    try {
      error = await client.responses.create({ input: scripted({ text: 'later' }), background: true }).catch((thrown: unknown) => thrown);
    } finally {
      await redis.start();
    }
    expect(error).toBeInstanceOf(OpenAI.InternalServerError);
    const refused = error as InstanceType<typeof OpenAI.InternalServerError>;
    expect(refused.status).toBe(503);
    expect(Number(refused.headers?.get('retry-after'))).toBeGreaterThan(0);
    expect(refused.error).toMatchObject({ type: 'server_error', code: 'unavailable' });

    // The SDK's own retries wait out its Retry-After; here the next request simply works.
    const later = await openAiClient(stack.url, apiKey, { maxRetries: 3 }).responses.create({ input: scripted({ text: 'Back again.' }) });
    expect(later).toMatchObject({ status: 'completed', output_text: 'Back again.' });
  }, 60_000);
});
