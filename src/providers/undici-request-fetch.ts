import { Readable } from 'node:stream';
import { undici } from './undici-module';

/** Statuses whose answer has no body: a `Response` made with one throws. */
const NULL_BODY_STATUSES = new Set([101, 204, 205, 304]);

/**
 * A `fetch` for the `openai` SDK that makes its requests with undici's `request` instead of the
 * WHATWG `fetch`. Node's `fetch` spends about 0.4 ms of CPU on a completion request on our
 * 2-core machines (its request and response objects, its body mixins, its stream plumbing);
 * `request` spends a fraction of that, and a turn makes one such request per step. The SDK still
 * builds the request, sets the timeout and maps statuses and connection failures to its errors.
 *
 * Unlike `fetch`, it follows no redirects and asks for no compression, which a chat-completions
 * endpoint needs neither of. A body it cannot send (a form, a stream) goes to `fetch` instead.
 */
export const undiciRequestFetch: typeof fetch = async (input, init) => {
  const body = init?.body;
  if (!(body === undefined || body === null || typeof body === 'string' || body instanceof Uint8Array) || input instanceof Request) {
    return fetch(input, init);
  }
  const signal = init?.signal ?? undefined;
  const answer = await undici()
    .request(input instanceof URL ? input : String(input), {
      method: (init?.method ?? 'GET') as 'GET',
      headers: Object.fromEntries(new Headers(init?.headers)),
      body: body ?? null,
      signal,
    })
    .catch((error: unknown) => {
      // Rejected as `fetch` rejects, which is what the SDK tells an abort or a network failure by.
      if (signal?.aborted) throw signal.reason;
      throw new TypeError('fetch failed', { cause: error });
    });
  const headers = new Headers();
  for (const [name, value] of Object.entries(answer.headers)) {
    if (Array.isArray(value)) for (const each of value) headers.append(name, each);
    else if (value !== undefined) headers.set(name, value);
  }
  if (NULL_BODY_STATUSES.has(answer.statusCode) || init?.method === 'HEAD') {
    answer.body.resume();
    return new Response(null, { status: answer.statusCode, headers });
  }
  const response = new Response(lazyWebBody(answer.body), { status: answer.statusCode, headers });
  nodeBodies.set(response, answer.body);
  return response;
};

const nodeBodies = new WeakMap<Response, Readable>();

/**
 * The body of a response made here, as the Node stream undici gave, for a reader that takes it
 * before anything reads `response.body`: a streamed completion's thousands of reads then skip
 * the WHATWG stream that wraps it (its queue, its promises, its adapter), a few percent of the
 * CPU of every token. Undefined for a response made elsewhere.
 */
export function takeNodeBody(response: Response): Readable | undefined {
  const body = nodeBodies.get(response);
  nodeBodies.delete(response);
  return body;
}

/**
 * A WHATWG body that attaches to the Node stream only when first read (the SDK reads an error's
 * body; a completion's is read through {@link takeNodeBody}), so that nothing buffers beside the
 * reader that takes the Node stream.
 */
function lazyWebBody(body: Readable): ReadableStream<Uint8Array> {
  let reader: ReadableStreamDefaultReader<Uint8Array> | undefined;
  return new ReadableStream<Uint8Array>(
    {
      async pull(controller) {
        reader ??= (Readable.toWeb(body) as ReadableStream<Uint8Array>).getReader();
        const { done, value } = await reader.read();
        if (done) controller.close();
        else controller.enqueue(value);
      },
      cancel(reason) {
        body.destroy(reason instanceof Error ? reason : undefined);
      },
    },
    { highWaterMark: 0 },
  );
}
