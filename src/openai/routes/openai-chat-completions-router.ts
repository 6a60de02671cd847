import { Router, type Response } from 'express';
import { AppError } from '../../errors/app-error';
import { releaseBody } from '../../api/body-bytes';
import { principalOf } from '../../api/require-user';
import { parseInput } from '../../api/validate';
import { LiveSseStreams, type LiveSseOptions } from '../../api/live-sse';
import type { ConversationEventSource } from '../../api/turn-event-stream';
import { writesPerTick } from '../../subscriptions/writes-per-tick';
import type { Turn } from '../../store/turns-repository';
import { createChatCompletionSchema, unsupportedChatParameter } from '../chat-completion-request';
import { chatCompletionId } from '../chat-completion-id';
import { createChatChunkMapper } from '../chat-chunk-mapper';
import type { ChatCompletionsService } from '../chat-completions-service';
import { eventOfTurn, waitForTurnEnd } from './openai-response-stream';

export interface OpenAiChatCompletionsRouterDeps {
  chat: ChatCompletionsService;
  events: ConversationEventSource;
  streams: LiveSseStreams;
}

const SSE_HEADERS = { 'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-cache, no-transform', connection: 'keep-alive', 'x-accel-buffering': 'no' } as const;

/**
 * `POST /openai/v1/chat/completions` (docs/API.md, "OpenAI-compatible routes"): a turn of a new
 * conversation, answered once it has ended as a `chat.completion`, or streamed as
 * `chat.completion.chunk`s and `data: [DONE]`. The client going away does not stop the turn.
 */
export function openAiChatCompletionsRouter(deps: OpenAiChatCompletionsRouterDeps): Router {
  const router = Router();
  router.post('/', async (req, res) => {
    const { userId, keyId } = principalOf(res);
    const unsupported = unsupportedChatParameter(req.body);
    if (unsupported)
      throw new AppError('unsupported_parameter', `unsupported parameter: ${unsupported.param}: ${unsupported.message}`, [
        { field: unsupported.param, message: unsupported.message },
      ]);
    const request = parseInput(createChatCompletionSchema, req.body);
    const { turn, callerFunctions } = await deps.chat.create(userId, request, keyId);
    releaseBody(req);
    const created = Math.floor(Date.now() / 1000);
    if (request.stream === true) {
      const mapper = createChatChunkMapper({
        id: chatCompletionId(turn.id),
        created,
        model: request.model,
        includeUsage: request.stream_options?.include_usage === true,
        callerFunctions,
      });
      return streamChunks(deps, { turn, keyId, res, mapper });
    }
    const gone = new AbortController();
    res.on('close', () => gone.abort());
    await waitForTurnEnd(deps.events, { conversationId: turn.conversationId, afterSeq: 0 }, turn.id, gone.signal);
    if (gone.signal.aborted) return;
    const { turn: ended, completion } = await deps.chat.completion(turn.id, request.model, created);
    if (ended.status === 'failed') {
      const error = ended.error ?? { code: 'internal', message: 'the turn failed' };
      res.status(502).json({ error: { message: `${error.code}: ${error.message}`, type: 'server_error', param: null, code: error.code } });
      return;
    }
    res.json(completion);
  });
  return router;
}

/** The turn's events from its conversation's start, live, as chunks until it ends. */
async function streamChunks(
  deps: OpenAiChatCompletionsRouterDeps,
  input: { turn: Turn; keyId: string; res: Response; mapper: ReturnType<typeof createChatChunkMapper> },
): Promise<void> {
  const { res, mapper, turn } = input;
  res.writeHead(200, SSE_HEADERS);
  res.flushHeaders();
  const data = (value: unknown) => `data: ${JSON.stringify(value)}\n\n`;
  const live = deps.streams.start(res, input.keyId, (reason) => data({ error: { message: reason, type: 'invalid_request_error', param: null, code: 'invalid_api_key' } }));
  const holdWrites = writesPerTick(res);
  res.write(data(mapper.start()));
  /** The turn ended and its usage is being read: what the subscription delivers meanwhile is not the turn's. */
  let closing = false;
  const outcome = await deps.events.subscribe({
    conversationId: turn.conversationId,
    after: 0,
    deliver: (json) => {
      if (live.isEnded || closing) return;
      const event = eventOfTurn(json, turn.id);
      if (!event) return;
      if (deps.streams.cutIfBehind(live, res)) return;
      const mapped = mapper.map(event);
      const text = mapped.chunks.map(data).join('');
      if (text) {
        holdWrites();
        res.write(text);
      }
      if (mapped.error) live.end(data({ error: { message: `${mapped.error.code}: ${mapped.error.message}`, type: 'server_error', param: null, code: mapped.error.code } }));
      else if (mapped.usageDue) {
        // The turn's lines are committed before its end is announced; nothing of it follows its end.
        closing = true;
        deps.chat.usage(turn.id).then(
          (usage) => live.end(`${data(mapper.usage(usage))}data: [DONE]\n\n`),
          (error: unknown) => live.end(data({ error: { message: String(error), type: 'server_error', param: null, code: 'internal' } })),
        );
      } else if (mapped.ended) live.end('data: [DONE]\n\n');
    },
    onError: () => live.end(),
  });
  if (!outcome.ok) return live.end(data({ error: { message: outcome.message, type: 'server_error', param: null, code: outcome.code } }));
  live.onEnd(outcome.subscription.dispose);
  if (!live.isEnded) outcome.subscription.start();
}

/** The streams of this route, ended together at shutdown. */
export function chatCompletionStreams(options: LiveSseOptions): LiveSseStreams {
  return new LiveSseStreams(options);
}
