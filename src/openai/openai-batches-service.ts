import { randomUUID } from 'node:crypto';
import { z } from 'zod';
import { AppError, notFound } from '../errors/app-error';
import { submitBatch, type BatchSubmissionDeps } from '../batches/batch-submission';
import type { BatchRunner } from '../batches/batch-runner';
import type { Db, Queryable } from '../store/db';
import type { Batch, BatchesRepository } from '../store/batches-repository';
import type { OpenAiBatchesRepository, OpenAiBatchRecord } from './store/openai-batches-repository';
import type { OpenAiFilesRepository } from './store/openai-files-repository';
import { jsonlChunks, outputLine, type OutputContext } from './batch-output-lines';
import { OPENAI_BATCH_ENDPOINTS, type OpenAiEndpoint } from './batch-line';

/** `POST /openai/v1/batches`. */
export const createOpenAiBatchSchema = z
  .object({
    input_file_id: z.string().min(1).max(200),
    endpoint: z.enum(OPENAI_BATCH_ENDPOINTS).meta({ description: "The endpoint every line's `url` names; the output lines' bodies are its answers." }),
    completion_window: z.literal('24h'),
    metadata: z.record(z.string().max(64), z.string().max(512)).nullable().optional(),
    output_expires_after: z.unknown().optional().meta({ description: 'Accepted and ignored: files are kept until deleted.' }),
  })
  .strict();
export type CreateOpenAiBatch = z.infer<typeof createOpenAiBatchSchema>;

export interface OpenAiBatchesServiceDeps {
  db: Db;
  files: Pick<OpenAiFilesRepository, 'get' | 'content' | 'write'>;
  openAiBatches: OpenAiBatchesRepository;
  batches: Pick<BatchesRepository, 'get' | 'endedItems'>;
  submission: BatchSubmissionDeps;
  runner: Pick<BatchRunner, 'cancel'>;
  startBatch(batchId: string): void;
  /** LLM_MODEL: the model an output line names when its request named none. */
  defaultModel: string;
}

/** An OpenAI batch and the Switchyard batch it runs as (null: its input was refused). */
export interface OpenAiBatchState {
  record: OpenAiBatchRecord;
  batch: Batch | null;
}

/** Ended items read per query while output files are written. */
const ITEMS_PAGE = 500;

/**
 * OpenAI's Batch API over Switchyard batches (docs/API.md, "OpenAI-compatible routes"): the input
 * file's lines are a JSONL submission (batches/batch-submission.ts, which takes OpenAI's lines),
 * so an OpenAI batch has the priorities, progress events and webhooks of any batch. Once the
 * batch has ended, its output and error files are written in one transaction (OpenAI's
 * `finalizing`), by whichever request finds it ended first.
 */
export class OpenAiBatchesService {
  constructor(private readonly deps: OpenAiBatchesServiceDeps) {}

  async create(userId: string, request: CreateOpenAiBatch): Promise<OpenAiBatchState> {
    const file = await this.deps.files.get(userId, request.input_file_id);
    if (!file) throw new AppError('not_found', `no file ${request.input_file_id}`, [{ field: 'input_file_id', message: 'no such file' }]);
    const common = { userId, inputFileId: file.id, endpoint: request.endpoint, completionWindow: request.completion_window, metadata: request.metadata ?? null };
    let outcome;
    let record: OpenAiBatchRecord | undefined;
    // The record is stored in the batch's transaction: a crash in between would leave a batch that runs
    // with no OpenAI batch to show it, and the client's retry would make and run another.
    const alongside = async (tx: Queryable, batchId: string) => {
      record = await this.deps.openAiBatches.insert({ id: batchId, batchId, errors: null, ...common }, tx);
    };
    try {
      outcome = await submitBatch(this.deps.submission, {
        userId,
        format: 'jsonl',
        query: {},
        body: this.deps.files.content(file.id),
        alongside,
        openAiEndpoint: request.endpoint,
        ...(request.metadata ? { metadata: request.metadata } : {}),
      });
    } catch (error) {
      // A refused file is a batch that failed its validation, as OpenAI shows it, with every bad line.
      if (!AppError.isInstance(error) || error.code !== 'invalid_request') throw error;
      const errors = lineProblems(error);
      const record = await this.deps.openAiBatches.insert({ id: `batch_${randomUUID()}`, batchId: null, errors, ...common });
      return { record, batch: null };
    }
    // Without an Idempotency-Key every submission creates its batch.
    if (outcome.kind !== 'created' || !record) throw new AppError('internal', `an OpenAI batch's submission was ${outcome.kind}`);
    this.deps.startBatch(outcome.batch.id);
    return { record, batch: outcome.batch };
  }

  /** The batch as it stands; one that has ended gets its output files first. */
  async get(userId: string, id: string): Promise<OpenAiBatchState> {
    const record = await this.deps.openAiBatches.get(userId, id);
    if (!record) throw notFound('batch');
    return this.current(record);
  }

  async list(userId: string, options: { limit: number; after?: string }): Promise<{ data: OpenAiBatchState[]; hasMore: boolean }> {
    const page = await this.deps.openAiBatches.list(userId, options);
    return { data: await Promise.all(page.data.map((record) => this.current(record))), hasMore: page.hasMore };
  }

  /** Items not yet started never start, running ones are cancelled; ended ones keep their results (OpenAI's partial results). */
  async cancel(userId: string, id: string): Promise<OpenAiBatchState> {
    const state = await this.get(userId, id);
    if (state.batch) await this.deps.runner.cancel(state.batch);
    return this.current(state.record);
  }

  private async current(record: OpenAiBatchRecord): Promise<OpenAiBatchState> {
    const batch = record.batchId ? await this.deps.batches.get(record.userId, record.batchId) : null;
    if (!batch || record.finalizedAt || (batch.status !== 'completed' && batch.status !== 'cancelled')) return { record, batch };
    return { record: await this.finalize(record, batch), batch };
  }

  /** Writes the output file (succeeded items) and the error file (the others), each only when it has lines. */
  private async finalize(record: OpenAiBatchRecord, batch: Batch): Promise<OpenAiBatchRecord> {
    const context: OutputContext = {
      batchId: batch.id,
      endpoint: record.endpoint as OpenAiEndpoint,
      created: Math.floor(Date.parse(batch.finishedAt ?? batch.createdAt) / 1000),
      defaultModel: this.deps.defaultModel,
    };
    return this.deps.db.transaction(async (tx) => {
      const locked = await this.deps.openAiBatches.lockForFinalizing(record.id, tx);
      if (!locked || locked.finalizedAt) return locked ?? record;
      const write = async (kind: 'output' | 'error', wanted: (status: string) => boolean) => {
        const id = `file-${randomUUID().replace(/-/g, '')}`;
        const lines = this.endedLines(batch.id, wanted, context, tx);
        await this.deps.files.write({ id, userId: record.userId, purpose: 'batch_output', filename: `${batch.id}_${kind}.jsonl` }, jsonlChunks(lines), tx);
        return id;
      };
      const { succeeded, failed, cancelled } = batch.counts;
      const outputFileId = succeeded > 0 ? await write('output', (status) => status === 'succeeded') : null;
      const errorFileId = failed + cancelled > 0 ? await write('error', (status) => status !== 'succeeded') : null;
      return this.deps.openAiBatches.finalized(record.id, { outputFileId, errorFileId }, tx);
    });
  }

  private async *endedLines(batchId: string, wanted: (status: string) => boolean, context: OutputContext, tx: Queryable): AsyncGenerator<Record<string, unknown>> {
    for (let after = -1; ;) {
      const items = await this.deps.batches.endedItems(batchId, after, ITEMS_PAGE, tx);
      if (items.length === 0) return;
      for (const item of items) if (wanted(item.status)) yield outputLine(item, context);
      after = items[items.length - 1]!.position;
    }
  }
}

/** A refusal's line problems as OpenAI's `errors.data`. */
function lineProblems(error: AppError): NonNullable<OpenAiBatchRecord['errors']> {
  const details = Array.isArray(error.details) ? (error.details as { line?: number; field?: string; message: string; code?: string }[]) : [];
  if (details.length === 0) return [{ code: 'invalid_request', message: error.message, line: null, param: null }];
  return details.map((detail) => ({ code: detail.code ?? 'invalid_request', message: detail.message, line: detail.line ?? null, param: detail.field ?? null }));
}
