import http from 'node:http';
import { createOpenAICompatible } from '@ai-sdk/openai-compatible';
import { convertToModelMessages, generateId, streamText, type UIMessage } from 'ai';
import { Redis } from 'ioredis';
import { createResumableStreamContext } from 'resumable-stream/ioredis';

/**
 * The peer of the (1) and (2) baselines, run as its own process as Switchyard is: the AI SDK's
 * documented pattern for resumable chats ("Chatbot Resume Streams"), served by `node:http`
 * instead of a Next.js route. POST /api/chat `{id, message}` appends the user message to the
 * chat, calls `streamText` on the model (`@ai-sdk/openai-compatible` pointed at the run's
 * scripted model), and answers with the UI message stream, whose SSE copy `consumeSseStream`
 * hands to `resumable-stream` on Redis. Two departures from the page, both in the peer's
 * favour: the chat store is a Map in this process (the page leaves it to the application; a
 * durable one would add its writes), and the resumable-stream context is made once, with an
 * ioredis publisher and subscriber (resumable-stream's own README), not once per request.
 */
const env = {
  port: Number(process.env.PORT ?? 0),
  modelUrl: required('LLM_BASE_URL'),
  redisUrl: required('REDIS_URL'),
  keyPrefix: required('KEY_PREFIX'),
};

interface StoredChat {
  messages: UIMessage[];
  activeStreamId: string | null;
}

const chats = new Map<string, StoredChat>();
const provider = createOpenAICompatible({ name: 'scripted', baseURL: env.modelUrl, includeUsage: true });
const publisher = new Redis(env.redisUrl);
const subscriber = new Redis(env.redisUrl);
const streamContext = createResumableStreamContext({ waitUntil: null, keyPrefix: env.keyPrefix, publisher, subscriber });

function saveChat(id: string, update: Partial<StoredChat>): void {
  const chat = chats.get(id) ?? { messages: [], activeStreamId: null };
  chats.set(id, { ...chat, ...update });
}

async function postChat(request: http.IncomingMessage, response: http.ServerResponse): Promise<void> {
  const { id, message } = JSON.parse(await readBody(request)) as { id: string; message: UIMessage };
  const messages = [...(chats.get(id)?.messages ?? []), message];
  // Clear any previous active stream and save the user message.
  saveChat(id, { messages, activeStreamId: null });

  const result = streamText({ model: provider.chatModel('scripted'), messages: await convertToModelMessages(messages) });
  // It writes the response itself and settles when the stream ends; a failure ends the response.
  result
    .pipeUIMessageStreamToResponse(response, {
      originalMessages: messages,
      generateMessageId: generateId,
      onFinish: ({ messages: finished }) => saveChat(id, { messages: finished, activeStreamId: null }),
      async consumeSseStream({ stream }) {
        const streamId = generateId();
        await streamContext.createNewResumableStream(streamId, () => stream);
        saveChat(id, { activeStreamId: streamId });
      },
    })
    .catch((error: unknown) => response.destroy(error instanceof Error ? error : new Error(String(error))));
}

const server = http.createServer({ noDelay: true, keepAlive: true, keepAliveTimeout: 65_000 }, (request, response) => {
  if (request.method !== 'POST' || request.url !== '/api/chat') {
    response.writeHead(404).end();
    return;
  }
  postChat(request, response).catch((error: unknown) => {
    process.stderr.write(`POST /api/chat failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
    if (response.headersSent) response.destroy();
    else response.writeHead(500).end();
  });
});

server.listen(env.port, '127.0.0.1', () => {
  const address = server.address();
  process.stdout.write(`ai-sdk resumable chat listening on ${typeof address === 'object' && address ? address.port : address}\n`);
});

process.on('SIGTERM', () => {
  server.close();
  server.closeAllConnections();
  publisher.disconnect();
  subscriber.disconnect();
  process.exit(0);
});

function readBody(request: http.IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => resolve(Buffer.concat(chunks).toString()));
    request.on('error', reject);
  });
}

function required(name: string): string {
  const value = process.env[name];
  if (!value) throw new Error(`${name} is required`);
  return value;
}
