import http from 'node:http';
import { openUpload, readMetric, waitForMetric, type OpenUpload } from '../support/http';
import { poll } from '../support/poll';
import { startTestStack, type TestStack } from '../support/stack';

/** Each held body declares this many bytes; the budget takes three. */
const BODY_BYTES = 200_000;
const IN_FLIGHT = 'switchyard_turn_body_bytes_in_flight';

/**
 * MAX_TURN_BODY_BYTES_IN_FLIGHT: the bytes of `POST /openai/v1/responses` and `POST /api/chat`
 * bodies an API process reads and stores at once, taken by each request's declared length
 * before its body is read, given back however it ends, and as soon as what it asks is stored.
 * No worker runs: a foreground or streamed response, or a chat, stays open for as long as the
 * test wants.
 */
describe('turn body bytes in flight', () => {
  let stack: TestStack;
  let apiKey: string;

  beforeAll(async () => {
    stack = await startTestStack({ workers: 0, env: { MAX_TURN_BODY_BYTES_IN_FLIGHT: String(3 * BODY_BYTES) } });
    ({ apiKey } = await stack.createUser('large-bodies'));
  });
  afterAll(() => stack.close());

  const headers = (length = BODY_BYTES) => ({ authorization: `Bearer ${apiKey}`, 'content-type': 'application/json', 'content-length': String(length) });
  /** A JSON body of exactly `bytes` bytes (padded with whitespace, which JSON allows). */
  const padded = (body: Record<string, unknown>, bytes = BODY_BYTES) => JSON.stringify(body).padEnd(bytes, ' ');
  const HEAD = '{"input": "held"';
  /** A Responses body of BODY_BYTES that has sent its head only; `rest(text)` is what completes it. */
  const holdResponseBody = (): OpenUpload => {
    const upload = openUpload(stack.url, '/openai/v1/responses', headers());
    upload.write(HEAD);
    return upload;
  };
  const rest = (text: string) => text.padEnd(BODY_BYTES - HEAD.length, ' ');
  const turnCount = async () => Number((await stack.resources.db.query<{ n: string }>('SELECT count(*) AS n FROM turns')).rows[0]!.n);

  it('refuses the Responses body past it at once, in OpenAI shape with 503 and Retry-After, and gets the bytes back when requests end, fail or are abandoned', async () => {
    const [ending, failing, abandoned] = [holdResponseBody(), holdResponseBody(), holdResponseBody()];
    await waitForMetric(stack.url, IN_FLIGHT, 3 * BODY_BYTES);

    // Its body is never sent: only an answer given before reading it can arrive.
    const refused = await openUpload(stack.url, '/openai/v1/responses', headers()).response;
    expect([refused.status, refused.headers['retry-after']]).toEqual([503, expect.stringMatching(/^\d+$/)]);
    expect(refused.body).toEqual({ error: { message: expect.stringContaining('MAX_TURN_BODY_BYTES_IN_FLIGHT'), type: 'server_error', param: null, code: 'unavailable' } });
    // /api/chat shares the budget, in its own error shape; other routes, whose requests end at once, do not.
    const post = (path: string, body: unknown) =>
      fetch(`${stack.url}${path}`, { method: 'POST', headers: { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json' }, body: JSON.stringify(body) });
    const chat = await post('/api/chat', {});
    expect([chat.status, ((await chat.json()) as any).error.code]).toEqual([503, 'unavailable']);
    expect((await post('/v1/conversations', { title: 'not refused' })).status).toBe(201);

    ending.end(rest(', "background": true}'));
    expect((await ending.response).status).toBe(200);
    await waitForMetric(stack.url, IN_FLIGHT, 2 * BODY_BYTES);
    failing.end(rest(', "background": }'));
    expect((await failing.response).status).toBe(400);
    await waitForMetric(stack.url, IN_FLIGHT, BODY_BYTES);
    abandoned.abandon();
    await expect(abandoned.response).rejects.toThrow();
    await waitForMetric(stack.url, IN_FLIGHT, 0);

    // All of it is free again: a body of the whole budget less a little goes through.
    const whole = await fetch(`${stack.url}/openai/v1/responses`, {
      method: 'POST',
      headers: headers(3 * BODY_BYTES),
      body: padded({ input: 'a whole budget', background: true }, 3 * BODY_BYTES),
    });
    expect(whole.status).toBe(200);
  });

  it('gives them back once a response is stored, while a foreground or a streamed one waits for its turn, and once a chat streams', async () => {
    const before = await turnCount();
    const waiting = [
      openRequest('/openai/v1/responses', padded({ input: 'waits in the foreground' })),
      openRequest('/openai/v1/responses', padded({ input: 'waits streamed', stream: true })),
      openRequest('/api/chat', padded({ id: `chat-${Date.now()}`, messages: [{ id: 'm1', role: 'user', parts: [{ type: 'text', text: 'waits in a chat' }] }] })),
    ];
    await poll('the three turns were stored', async () => (await turnCount()) === before + 3);
    // Stored, and open for as long as their turns (which no worker runs): none holds its bytes.
    await waitForMetric(stack.url, IN_FLIGHT, 0);
    expect(waiting.every((request) => !request.answered)).toBe(true);
    expect(await readMetric(stack.url, IN_FLIGHT)).toBe(0);
    waiting.forEach((request) => request.abandon());
  });

  /** A POST whose answer the test does not wait for: whether it has ended, and how to leave. */
  function openRequest(path: string, body: string): { answered: boolean; abandon(): void } {
    const state = { answered: false, abandon: () => request.destroy() };
    const request = http.request(`${stack.url}${path}`, { method: 'POST', headers: headers(Buffer.byteLength(body)) }, (incoming) => {
      incoming.resume();
      incoming.once('end', () => (state.answered = true));
    });
    request.on('error', () => undefined);
    request.end(body);
    return state;
  }
});
