import type { Queryable } from '../../store/db';

/** What an OpenAI batch adds to the Switchyard batch it runs as (migrations/0017_openai_compat.sql). */
export interface OpenAiBatchRecord {
  id: string;
  userId: string;
  /** The Switchyard batch (the same id); null for a batch whose input file was refused. */
  batchId: string | null;
  inputFileId: string;
  endpoint: string;
  completionWindow: string;
  metadata: Record<string, string> | null;
  /** Why the input file was refused: OpenAI's `errors.data`. */
  errors: { code: string; message: string; line: number | null; param: string | null }[] | null;
  outputFileId: string | null;
  errorFileId: string | null;
  finalizedAt: Date | null;
  createdAt: Date;
}

interface Row {
  id: string;
  user_id: string;
  batch_id: string | null;
  input_file_id: string;
  endpoint: string;
  completion_window: string;
  metadata: Record<string, string> | null;
  errors: OpenAiBatchRecord['errors'];
  output_file_id: string | null;
  error_file_id: string | null;
  finalized_at: Date | null;
  created_at: Date;
}

export class OpenAiBatchesRepository {
  constructor(private readonly db: Queryable) {}

  /** `on`: a transaction to write in (the one that stores its Switchyard batch). */
  async insert(
    record: Pick<OpenAiBatchRecord, 'id' | 'userId' | 'batchId' | 'inputFileId' | 'endpoint' | 'completionWindow' | 'metadata' | 'errors'>,
    on: Queryable = this.db,
  ): Promise<OpenAiBatchRecord> {
    const { rows } = await on.query<Row>(
      `INSERT INTO openai_batches (id, user_id, batch_id, input_file_id, endpoint, completion_window, metadata, errors)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8) RETURNING *`,
      [
        record.id,
        record.userId,
        record.batchId,
        record.inputFileId,
        record.endpoint,
        record.completionWindow,
        record.metadata && JSON.stringify(record.metadata),
        record.errors && JSON.stringify(record.errors),
      ],
    );
    return toRecord(rows[0]!);
  }

  /** Scoped to its owner: someone else's batch is indistinguishable from a missing one. */
  async get(userId: string, id: string): Promise<OpenAiBatchRecord | null> {
    const { rows } = await this.db.query<Row>('SELECT * FROM openai_batches WHERE id = $1 AND user_id = $2', [id, userId]);
    return rows[0] ? toRecord(rows[0]) : null;
  }

  /** Newest first, a page after the batch `after` (OpenAI's cursor is an id). */
  async list(userId: string, options: { limit: number; after?: string }): Promise<{ data: OpenAiBatchRecord[]; hasMore: boolean }> {
    const params: unknown[] = [userId, options.limit + 1];
    const after = options.after === undefined ? '' : ` AND ordinal < (SELECT ordinal FROM openai_batches WHERE id = $${params.push(options.after)} AND user_id = $1)`;
    const { rows } = await this.db.query<Row>(`SELECT * FROM openai_batches WHERE user_id = $1${after} ORDER BY ordinal DESC LIMIT $2`, params);
    return { data: rows.slice(0, options.limit).map(toRecord), hasMore: rows.length > options.limit };
  }

  /** Locks the row for `tx` and reads it: whoever finalizes a batch does it alone. */
  async lockForFinalizing(id: string, tx: Queryable): Promise<OpenAiBatchRecord | null> {
    const { rows } = await tx.query<Row>('SELECT * FROM openai_batches WHERE id = $1 FOR UPDATE', [id]);
    return rows[0] ? toRecord(rows[0]) : null;
  }

  async finalized(id: string, files: { outputFileId: string | null; errorFileId: string | null }, tx: Queryable): Promise<OpenAiBatchRecord> {
    const { rows } = await tx.query<Row>('UPDATE openai_batches SET output_file_id = $2, error_file_id = $3, finalized_at = clock_timestamp() WHERE id = $1 RETURNING *', [
      id,
      files.outputFileId,
      files.errorFileId,
    ]);
    return toRecord(rows[0]!);
  }
}

function toRecord(row: Row): OpenAiBatchRecord {
  return {
    id: row.id,
    userId: row.user_id,
    batchId: row.batch_id,
    inputFileId: row.input_file_id,
    endpoint: row.endpoint,
    completionWindow: row.completion_window,
    metadata: row.metadata,
    errors: row.errors,
    outputFileId: row.output_file_id,
    errorFileId: row.error_file_id,
    finalizedAt: row.finalized_at,
    createdAt: row.created_at,
  };
}
