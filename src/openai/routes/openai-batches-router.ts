import { Router } from 'express';
import type { z } from 'zod';
import { createOpenAiBatchSchema, type OpenAiBatchesService, type OpenAiBatchState } from '../openai-batches-service';
import { userIdOf } from '../../api/require-user';
import { sendJson } from '../../api/send-json';
import { parseInput, parseRouteId } from '../../api/validate';
import { openAiBatchListQuerySchema, openAiBatchListSchema, openAiBatchSchema } from './openai-batches-contract';
import { openAiPage, toUnixSeconds } from './openai-operation';

/** How long OpenAI gives a batch: shown as `expires_at`; Switchyard batches run to their end. */
const COMPLETION_WINDOW_SECONDS = 24 * 3600;

/** `/openai/v1/batches` (docs/API.md, "OpenAI-compatible routes"). */
export function openAiBatchesRouter(deps: { batches: OpenAiBatchesService }): Router {
  const router = Router();

  router.post('/', async (req, res) => {
    sendJson(res, openAiBatchSchema, batchView(await deps.batches.create(userIdOf(res), parseInput(createOpenAiBatchSchema, req.body))));
  });

  router.get('/', async (req, res) => {
    const query = parseInput(openAiBatchListQuerySchema, req.query);
    const page = await deps.batches.list(userIdOf(res), { limit: query.limit, ...(query.after ? { after: query.after } : {}) });
    const data = page.data.map(batchView);
    sendJson(res, openAiBatchListSchema, openAiPage(data, page.hasMore));
  });

  router.get('/:id', async (req, res) => {
    sendJson(res, openAiBatchSchema, batchView(await deps.batches.get(userIdOf(res), parseRouteId(req.params.id, 'batch'))));
  });

  router.post('/:id/cancel', async (req, res) => {
    sendJson(res, openAiBatchSchema, batchView(await deps.batches.cancel(userIdOf(res), parseRouteId(req.params.id, 'batch'))));
  });

  return router;
}

/** OpenAI's batch object of a batch as it stands. */
export function batchView({ record, batch }: OpenAiBatchState): z.output<typeof openAiBatchSchema> {
  const created = toUnixSeconds(record.createdAt);
  const finished = batch?.finishedAt ? toUnixSeconds(batch.finishedAt) : null;
  const finalized = record.finalizedAt ? toUnixSeconds(record.finalizedAt) : null;
  const status = !batch
    ? 'failed'
    : batch.status === 'queued' || batch.status === 'running'
      ? 'in_progress'
      : batch.status === 'cancelling'
        ? 'cancelling'
        : !finalized
          ? 'finalizing'
          : batch.status;
  return {
    id: record.id,
    object: 'batch',
    endpoint: record.endpoint,
    errors: record.errors ? { object: 'list', data: record.errors } : null,
    input_file_id: record.inputFileId,
    completion_window: record.completionWindow,
    status,
    output_file_id: record.outputFileId,
    error_file_id: record.errorFileId,
    created_at: created,
    in_progress_at: batch?.startedAt ? toUnixSeconds(batch.startedAt) : null,
    expires_at: created + COMPLETION_WINDOW_SECONDS,
    finalizing_at: batch && (batch.status === 'completed' || batch.status === 'cancelled') ? finished : null,
    completed_at: batch?.status === 'completed' ? finalized : null,
    failed_at: batch ? null : created,
    expired_at: null,
    cancelling_at: null,
    cancelled_at: batch?.status === 'cancelled' ? finished : null,
    request_counts: { total: batch?.counts.total ?? 0, completed: batch?.counts.succeeded ?? 0, failed: batch?.counts.failed ?? 0 },
    usage: {
      input_tokens: batch?.usage.promptTokens ?? 0,
      input_tokens_details: { cached_tokens: 0 },
      output_tokens: batch?.usage.completionTokens ?? 0,
      output_tokens_details: { reasoning_tokens: 0 },
      total_tokens: batch?.usage.totalTokens ?? 0,
    },
    metadata: record.metadata,
  };
}
