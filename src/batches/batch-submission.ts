import type { OpenAiEndpoint } from '../openai/batch-line';
import { isUtf8 } from 'node:buffer';
import { AppError } from '../errors/app-error';
import type { BatchesRepository, CreateBatchOutcome } from '../store/batches-repository';
import type { Queryable } from '../store/db';
import { BatchItemChecker } from './batch-item-checker';
import type { BatchDefaults, BatchItem, BatchOptions } from '../store/batch-item';
import { readJsonBatch, readJsonlOptions } from './batch-request';
import { BatchSpool } from './batch-spool';
import { readJsonlLines } from './jsonl-lines';
import type { UsableTools } from '../openai/function-tools';

export interface BatchSubmissionDeps {
  batches: Pick<BatchesRepository, 'create'>;
  /** The tools this user may use. */
  usableTools(userId: string): Promise<UsableTools>;
  /** Where a JSONL submission's checked items wait until its body has been read whole. */
  spoolDir: string;
  /** MAX_BATCH_BYTES. */
  maxBatchBytes: number;
  /** MAX_BATCH_JSON_BYTES: a JSON body, and one JSONL line. */
  maxBatchJsonBytes: number;
  /** MAX_BATCH_ITEMS. */
  maxBatchItems: number;
  /** `defaults.agent` as its items store it (`agent_…` or `agent_…@N`); 404 for one the user may not name. */
  resolveAgent(userId: string, reference: string): Promise<string>;
}

export interface BatchSubmission {
  userId: string;
  idempotencyKey?: string;
  format: 'json' | 'jsonl';
  query: Record<string, unknown>;
  /** The request body's bytes, as they arrive. */
  body: AsyncIterable<Buffer>;
  /** A JSONL batch's metadata, given by other means than its query (an OpenAI batch's). */
  metadata?: Record<string, unknown>;
  /** What must be stored with the batch, in its transaction (an OpenAI batch's record). */
  alongside?: (tx: Queryable, batchId: string) => Promise<void>;
  /** An OpenAI batch's `endpoint`: the `url` every one of its lines must have. */
  openAiEndpoint?: OpenAiEndpoint;
}

/**
 * `POST /v1/batches` from its body to its stored batch, in bounded memory whatever its size:
 * 1. JSONL is read line by line, each line checked as it comes (a bad one is a problem of its
 *    line), the kept items written to a spool file; a JSON body, which cannot be split before
 *    it is parsed, is read whole up to its own smaller limit (MAX_BATCH_JSON_BYTES).
 * 2. Once the body is read, a refusal names every bad line (nothing was stored).
 * 3. The batch and its items are stored in one transaction, the items in chunks: it exists
 *    entirely or not at all.
 */
export async function submitBatch(deps: BatchSubmissionDeps, submission: BatchSubmission): Promise<CreateBatchOutcome> {
  const usableTools = await deps.usableTools(submission.userId);
  const store = (checker: BatchItemChecker, options: BatchOptions, items: Iterable<BatchItem> | AsyncIterable<BatchItem>) => {
    const { skipped, requestHash } = checker.finish();
    const { userId, idempotencyKey, alongside } = submission;
    return deps.batches.create({ userId, options, items, skipped, requestHash, ...(idempotencyKey ? { idempotencyKey } : {}), ...(alongside ? { alongside } : {}) });
  };

  if (submission.format === 'json') {
    const batch = readJsonBatch(await readJsonBody(submission.body, deps), submission.query);
    if (batch.defaults.agent !== undefined) batch.defaults.agent = await deps.resolveAgent(submission.userId, batch.defaults.agent);
    const checker = newChecker(deps, batch.options, batch.defaults, usableTools, submission.openAiEndpoint);
    const items: BatchItem[] = [];
    batch.items.forEach((value, index) => {
      const item = checker.checkValue(index + 1, value);
      if (item && !checker.refusing) items.push(item);
    });
    return store(checker, batch.options, items);
  }

  const options = { ...readJsonlOptions(submission.query), ...(submission.metadata ? { metadata: submission.metadata } : {}) };
  const checker = newChecker(deps, options, {}, usableTools, submission.openAiEndpoint);
  const maxLineBytes = Math.min(deps.maxBatchJsonBytes, deps.maxBatchBytes);
  const spool = BatchSpool.create(deps.spoolDir);
  try {
    for await (const entry of readJsonlLines(submission.body, { maxBytes: deps.maxBatchBytes, maxLineBytes })) {
      const item =
        'tooLong' in entry
          ? checker.refuseLine({ line: entry.line, message: `longer than ${maxLineBytes} bytes (MAX_BATCH_JSON_BYTES); split the item's messages over several items` })
          : checker.checkLine(entry.line, entry.text);
      if (item && !checker.refusing) await spool.write(item);
    }
    return await store(checker, options, spool.items());
  } finally {
    await spool.discard();
  }
}

/** Tools every item gets (`defaults.tools`, `defaults.requireApproval`) are the batch's problem, not one line's. */
function newChecker(deps: BatchSubmissionDeps, options: BatchOptions, defaults: BatchDefaults, usableTools: UsableTools, openAiEndpoint?: OpenAiEndpoint): BatchItemChecker {
  const unknown = (['tools', 'requireApproval'] as const).flatMap((field) => (defaults[field] ?? []).filter((name) => !usableTools.has(name)).map((name) => ({ name, field })));
  if (unknown.length > 0) {
    throw new AppError(
      'invalid_request',
      `unknown tools: ${unknown.map((each) => each.name).join(', ')}`,
      unknown.map(({ name, field }) => ({ line: 0, field: `defaults.${field}`, message: `unknown tool "${name}"` })),
    );
  }
  return new BatchItemChecker({ options, defaults, maxItems: deps.maxBatchItems, usableTools, ...(openAiEndpoint ? { openAiEndpoint } : {}) });
}

/** A JSON body, parsed whole: at most MAX_BATCH_JSON_BYTES of strict UTF-8. */
async function readJsonBody(body: AsyncIterable<Buffer>, deps: BatchSubmissionDeps): Promise<unknown> {
  const limit = Math.min(deps.maxBatchJsonBytes, deps.maxBatchBytes);
  const pieces: Buffer[] = [];
  let total = 0;
  for await (const chunk of body) {
    total += chunk.length;
    if (total > limit) {
      throw new AppError(
        'payload_too_large',
        limit < deps.maxBatchBytes
          ? `a JSON batch is at most ${limit} bytes (MAX_BATCH_JSON_BYTES); send a larger one as JSONL (application/x-ndjson), up to ${deps.maxBatchBytes} bytes (MAX_BATCH_BYTES)`
          : `a batch submission is at most ${limit} bytes (MAX_BATCH_BYTES); split it into several batches`,
      );
    }
    pieces.push(chunk);
  }
  const bytes = Buffer.concat(pieces);
  if (!isUtf8(bytes)) throw new AppError('invalid_request', 'invalid batch: the body is not valid UTF-8; nothing was stored');
  const text = new TextDecoder('utf-8').decode(bytes).trim();
  try {
    // An empty body is an empty object: its missing `items` is then named.
    return text ? JSON.parse(text) : {};
  } catch {
    throw new AppError('invalid_json', 'the request body is not valid JSON');
  }
}
