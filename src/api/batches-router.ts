import type { Request } from 'express';
import { Router } from 'express';
import type { z } from 'zod';
import type { BatchRunner } from '../batches/batch-runner';
import { formatAgentReference } from '../agents/agent-reference';
import type { AgentReferences } from '../agents/agent-references';
import { submitBatch, type BatchSubmissionDeps } from '../batches/batch-submission';
import { AppError, notFound } from '../errors/app-error';
import type { Batch, BatchesRepository, BatchItemRecord } from '../store/batches-repository';
import type { OpenAiBatchesRepository } from '../openai/store/openai-batches-repository';
import { principalOf, userIdOf } from './require-user';
import type { BatchProgressFrame } from '../batches/batch-progress';
import type { LiveSseStreams } from './live-sse';
import type { SubmissionSlots } from './submission-slots';
import { usableToolsByName, type UsableToolsDeps } from './usable-tools';
import { parseInput, parseRouteId } from './validate';
import { batchPageSchema, batchResultLineSchema, batchRetriedSchema, batchSchema, batchSubmittedSchema } from './contract/batches-contract';
import { batchResultsSchema, idempotencyKeyHeaderSchema, listBatchesSchema } from './request-schemas';
import { sendJson } from './send-json';

export interface BatchesRouterDeps {
  batches: Pick<BatchesRepository, 'create' | 'get' | 'list' | 'endedItems'>;
  /** A batch made through `/openai/v1/batches` has a record there (with the batch's id). */
  openAiBatches: Pick<OpenAiBatchesRepository, 'get'>;
  /** Starts a stored batch's first items (in the background: the submission answers at once). */
  startBatch(batchId: string): void;
  runner: Pick<BatchRunner, 'cancel' | 'retry'>;
  /** Follows a batch's progress (see followBatch); the events route streams it. */
  followBatch(batchId: string, options: { send(frame: BatchProgressFrame): void; onEnd(): void }): Promise<{ stop(): void }>;
  streams: LiveSseStreams;
  usableTools: UsableToolsDeps;
  /** `defaults.agent`: the user's, not archived. */
  agentReferences: Pick<AgentReferences, 'resolve'>;
  /** MAX_BATCH_BYTES: batches take more than MAX_BODY_BYTES. */
  maxBatchBytes: number;
  /** MAX_BATCH_JSON_BYTES: a JSON batch body, and one JSONL line (what is parsed whole). */
  maxBatchJsonBytes: number;
  /** MAX_BATCH_ITEMS. */
  maxBatchItems: number;
  /** MAX_BATCH_SUBMISSIONS_IN_FLIGHT: submissions this process reads at once. */
  submissionSlots: SubmissionSlots;
  /** Where JSONL submissions wait on disk while their body is read. */
  spoolDir: string;
}

const JSONL_TYPES = ['application/x-ndjson', 'application/jsonl'];
/** Seconds a submission refused for want of a slot is told to wait. */
const SUBMISSION_RETRY_AFTER_SECONDS = 5;
/**
 * `/v1/batches` (docs/API.md, "Batches"). Mounted before the API's own body parsers: a batch
 * may be JSONL, and up to MAX_BATCH_BYTES.
 */
export function batchesRouter(deps: BatchesRouterDeps): Router {
  const router = Router();

  const submission: BatchSubmissionDeps = {
    batches: deps.batches,
    usableTools: (userId) => usableToolsByName(deps.usableTools, userId),
    spoolDir: deps.spoolDir,
    maxBatchBytes: deps.maxBatchBytes,
    maxBatchJsonBytes: deps.maxBatchJsonBytes,
    maxBatchItems: deps.maxBatchItems,
    resolveAgent: async (userId, reference) => formatAgentReference(await deps.agentReferences.resolve(userId, reference, 'defaults.agent')),
  };

  router.post('/', async (req, res) => {
    const format = batchFormat(req, deps.maxBatchBytes);
    const { 'idempotency-key': idempotencyKey } = parseInput(idempotencyKeyHeaderSchema, req.headers);
    // Before a byte of the body is read: a refused submission costs no memory.
    const release = deps.submissionSlots.tryTake();
    if (!release) {
      throw new AppError(
        'unavailable',
        `this API process is reading ${deps.submissionSlots.limit} batch submissions already (MAX_BATCH_SUBMISSIONS_IN_FLIGHT); try again shortly`,
        undefined,
        SUBMISSION_RETRY_AFTER_SECONDS,
      );
    }
    let outcome;
    try {
      outcome = await submitBatch(submission, {
        userId: userIdOf(res),
        ...(idempotencyKey ? { idempotencyKey } : {}),
        format,
        query: req.query as Record<string, unknown>,
        // Not destroyed when reading stops early: the rest is drained below, and the answer read.
        body: req.iterator({ destroyOnReturn: false }),
      });
    } catch (error) {
      // The slot is given back before draining: what is left costs no memory.
      release();
      // A client gone mid-body is not our failure (nor worth an error log): nobody reads the answer.
      if (req.destroyed && !req.complete) throw new AppError('invalid_request', 'the submission was cut off before its end; nothing was stored');
      await drainBody(req);
      throw error;
    } finally {
      release();
    }
    if (outcome.kind === 'conflict') throw new AppError('idempotency_conflict', 'this Idempotency-Key was used for another batch');
    if (outcome.kind === 'created') deps.startBatch(outcome.batch.id);
    // 202: accepted, its items run from here on; an Idempotency-Key repeat answers the batch it made.
    sendJson(res, batchSubmittedSchema, { batchId: outcome.batch.id, ...batchView(outcome.batch) }, outcome.kind === 'created' ? 202 : 200);
  });

  router.get('/', async (req, res) => {
    const query = parseInput(listBatchesSchema, req.query);
    const page = await deps.batches.list(userIdOf(res), { limit: query.limit, ...(query.cursor ? { before: query.cursor } : {}) });
    sendJson(res, batchPageSchema, { data: page.data.map(batchView), nextCursor: page.nextBefore });
  });

  router.get('/:id', async (req, res) => {
    const batch = await deps.batches.get(userIdOf(res), parseRouteId(req.params.id, 'batch'));
    if (!batch) throw notFound('batch');
    sendJson(res, batchSchema, batchView(batch));
  });

  router.post('/:id/cancel', async (req, res) => {
    const batch = await deps.batches.get(userIdOf(res), parseRouteId(req.params.id, 'batch'));
    if (!batch) throw notFound('batch');
    await deps.runner.cancel(batch);
    sendJson(res, batchSchema, batchView((await deps.batches.get(batch.userId, batch.id))!));
  });

  router.post('/:id/retry', async (req, res) => {
    const batch = await deps.batches.get(userIdOf(res), parseRouteId(req.params.id, 'batch'));
    if (!batch) throw notFound('batch');
    if (batch.status === 'cancelling') throw new AppError('invalid_request', 'the batch is being cancelled; retry it once it is cancelled');
    // Its output and error files are written once, when it ends: a rerun would never reach them.
    if (await deps.openAiBatches.get(batch.userId, batch.id))
      throw new AppError('conflict', 'an OpenAI batch cannot be retried; submit a new OpenAI batch for its failed requests');
    const requeued = await deps.runner.retry(batch.id);
    sendJson(res, batchRetriedSchema, { ...batchView((await deps.batches.get(batch.userId, batch.id))!), requeued });
  });

  router.get('/:id/events', async (req, res) => {
    const { userId, keyId } = principalOf(res);
    const batch = await deps.batches.get(userId, parseRouteId(req.params.id, 'batch'));
    if (!batch) throw notFound('batch');
    res.writeHead(200, { 'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-cache, no-transform', connection: 'keep-alive', 'x-accel-buffering': 'no' });
    const live = deps.streams.start(res, keyId, (reason) => `event: error\ndata: ${JSON.stringify({ code: 'unauthorized', message: reason })}\n\n`);
    const following = await deps.followBatch(batch.id, {
      send: (frame) => {
        const { type, ...data } = frame;
        if (!live.isEnded) res.write(`event: ${type}\ndata: ${JSON.stringify(data)}\n\n`);
      },
      onEnd: () => live.end(),
    });
    live.onEnd(following.stop);
  });

  router.get('/:id/results', async (req, res) => {
    const { after } = parseInput(batchResultsSchema, req.query);
    const batch = await deps.batches.get(userIdOf(res), parseRouteId(req.params.id, 'batch'));
    if (!batch) throw notFound('batch');
    // The first page before the headers: a failure is still an error answer, not a cut stream.
    let items = await deps.batches.endedItems(batch.id, after, RESULTS_PAGE);
    res.writeHead(200, { 'content-type': 'application/x-ndjson; charset=utf-8', 'cache-control': 'no-cache' });
    // Page by page from the database: a 50,000-item batch is never held in memory.
    while (items.length > 0 && !res.destroyed) {
      const page = items.map((item) => JSON.stringify(resultLine(item))).join('\n') + '\n';
      if (!res.write(page)) await new Promise((resolve) => res.once('drain', resolve));
      items = await deps.batches.endedItems(batch.id, items[items.length - 1]!.position, RESULTS_PAGE);
    }
    res.end();
  });

  return router;
}

const RESULTS_PAGE = 500;
/** A results line (docs/API.md): `index` is the item's 0-based position in the submission. */
export function resultLine(item: BatchItemRecord): z.output<typeof batchResultLineSchema> {
  const result = item.result;
  return {
    index: item.position,
    ...(item.customId !== null ? { customId: item.customId } : {}),
    conversationId: item.conversationId,
    status: item.status,
    text: result?.text ?? '',
    ...(result?.messageId ? { messageId: result.messageId } : {}),
    toolCalls: result?.toolCalls ?? [],
    usage: result?.usage ?? { promptTokens: 0, completionTokens: 0, totalTokens: 0, costUsd: 0 },
    ...(result?.error ? { error: result.error } : {}),
    ...(result?.output !== undefined ? { output: result.output } : {}),
    ...(result?.agentId !== undefined && result.agentVersion !== undefined ? { agentId: result.agentId, agentVersion: result.agentVersion } : {}),
  };
}

/**
 * JSON or JSONL, in UTF-8 and uncompressed; anything else is a 415 that says what is taken. A
 * declared length past MAX_BATCH_BYTES is refused before reading.
 */
function batchFormat(req: Request, maxBatchBytes: number): 'json' | 'jsonl' {
  const format = req.is(JSONL_TYPES) ? 'jsonl' : req.is('application/json') ? 'json' : null;
  if (!format) throw new AppError('unsupported_media_type', `a batch is JSON (application/json) or JSONL (${JSONL_TYPES.join(' or ')})`);
  const charset = /;\s*charset\s*=\s*"?([^";\s]+)/i.exec(req.headers['content-type'] ?? '')?.[1];
  if (charset && !/^utf-?8$/i.test(charset)) throw new AppError('unsupported_media_type', `a batch is UTF-8; this one says charset=${charset}`);
  const encoding = req.headers['content-encoding'];
  if (encoding && encoding.toLowerCase() !== 'identity') throw new AppError('unsupported_media_type', `a batch is sent uncompressed; this one is ${encoding}`);
  if (Number(req.headers['content-length'] ?? 0) > maxBatchBytes) {
    throw new AppError('payload_too_large', `a batch submission is at most ${maxBatchBytes} bytes (MAX_BATCH_BYTES); split it into several batches`);
  }
  return format;
}

/**
 * Reads off what is left of a refused submission's body, as body parsers do, so that the
 * client, still sending, gets the answer rather than a reset connection. Costs no memory.
 */
async function drainBody(req: Request): Promise<void> {
  if (req.complete) return;
  await new Promise<void>((resolve) => {
    req
      .once('end', resolve)
      .once('close', resolve)
      .once('error', () => resolve());
    req.resume();
  });
}

export function batchView(batch: Batch): z.output<typeof batchSchema> {
  const { userId: _userId, ...view } = batch;
  const ended = batch.counts.succeeded + batch.counts.failed + batch.counts.cancelled;
  const etaSeconds =
    batch.status === 'running' && batch.startedAt && ended > 0 ? Math.round((((Date.now() - Date.parse(batch.startedAt)) / 1000) * (batch.counts.total - ended)) / ended) : null;
  return { ...view, etaSeconds };
}
