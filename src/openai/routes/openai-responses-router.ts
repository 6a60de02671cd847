import { Router } from 'express';
import type { ResponsesService } from '../responses-service';
import type { ResponseRecord } from '../store/openai-responses-repository';
import type { Turn } from '../../store/turns-repository';
import { AppError } from '../../errors/app-error';
import { createResponseSchema } from '../response-request';
import { openAiItemListQuerySchema } from '../conversation-request';
import { openAiItemListSchema } from './openai-conversations-contract';
import { unsupportedResponseParameter } from '../response-settings';
import { releaseBody } from '../../api/body-bytes';
import { principalOf } from '../../api/require-user';
import { sendJson } from '../../api/send-json';
import { parseInput, parseRouteId } from '../../api/validate';
import { openAiResponseSchema, retrieveResponseQuerySchema } from './openai-responses-contract';
import type { ConversationEventSource } from '../../api/turn-event-stream';
import { waitForTurnEnd, type ResponseStreamer } from './openai-response-stream';

export interface OpenAiResponsesRouterDeps {
  responses: ResponsesService;
  streamer: ResponseStreamer;
  events: ConversationEventSource;
}

/**
 * `/openai/v1/responses` (docs/API.md, "OpenAI-compatible routes"): a response is a turn, run in
 * the background, streamed, or waited for; retrieved and resumed by `sequence_number`; cancelled.
 */
export function openAiResponsesRouter(deps: OpenAiResponsesRouterDeps): Router {
  const router = Router();

  router.post('/', async (req, res) => {
    const { userId, keyId } = principalOf(res);
    const { record, turn, stream, background } = await createResponse(deps.responses, { userId, keyId }, req.body);
    // Stored: the request may stay open for the whole turn, holding neither its body nor its bytes.
    releaseBody(req);
    if (stream) return deps.streamer.stream({ record, turn, keyId, startingAfter: -1, res });
    if (!background) {
      // The client going away does not stop the response: it is retrieved later by its id.
      const gone = new AbortController();
      res.on('close', () => gone.abort());
      await waitForTurnEnd(deps.events, record, turn.id, gone.signal);
      if (gone.signal.aborted) return;
    }
    sendJson(res, openAiResponseSchema, await deps.responses.object(record));
  });

  router.get('/:id', async (req, res) => {
    const { userId, keyId } = principalOf(res);
    const query = parseInput(retrieveResponseQuerySchema, req.query);
    const { record, turn } = await deps.responses.get(userId, parseRouteId(req.params.id, 'response'));
    if (query.stream === 'true') return deps.streamer.stream({ record, turn, keyId, startingAfter: query.starting_after ?? -1, res });
    sendJson(res, openAiResponseSchema, await deps.responses.object(record, turn));
  });

  router.get('/:id/input_items', async (req, res) => {
    const id = parseRouteId(req.params.id, 'response');
    const query = parseInput(openAiItemListQuerySchema, req.query);
    sendJson(res, openAiItemListSchema, await deps.responses.inputItems(principalOf(res).userId, id, query));
  });

  router.delete('/:id', async (req, res) => {
    res.json(await deps.responses.delete(principalOf(res).userId, parseRouteId(req.params.id, 'response')));
  });

  router.post('/:id/cancel', async (req, res) => {
    sendJson(res, openAiResponseSchema, await deps.responses.cancel(principalOf(res).userId, parseRouteId(req.params.id, 'response')));
  });

  return router;
}

/**
 * Makes the response a body asks for. Apart from the route, so that nothing of the body (as
 * large as MAX_BODY_BYTES, and larger parsed) outlives this call: the turn is kept without its
 * input, which a stream or a wait does not need.
 */
async function createResponse(
  responses: ResponsesService,
  principal: { userId: string; keyId: string },
  body: unknown,
): Promise<{ record: ResponseRecord; turn: Turn; stream: boolean; background: boolean }> {
  const unsupported = unsupportedResponseParameter(body);
  if (unsupported)
    throw new AppError('unsupported_parameter', `unsupported parameter: ${unsupported.param}: ${unsupported.message}`, [
      { field: unsupported.param, message: unsupported.message },
    ]);
  const request = parseInput(createResponseSchema, body);
  const { record, turn } = await responses.create(principal.userId, request, principal.keyId);
  return { record, turn: { ...turn, input: null }, stream: request.stream === true, background: request.background === true };
}
