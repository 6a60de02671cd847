import type { Db, Queryable } from '../../store/db';

/** A file of the OpenAI-compatible routes, without its bytes. */
export interface OpenAiFile {
  id: string;
  userId: string;
  purpose: string;
  filename: string;
  bytes: number;
  createdAt: Date;
}

interface FileRow {
  id: string;
  user_id: string;
  purpose: string;
  filename: string;
  /** bigint: text from the driver. */
  bytes: string | number;
  created_at: Date;
}

/** Chunks read per query while a file is read back. */
const CHUNKS_PER_READ = 1;

/**
 * Files and their bytes, in chunks (migrations/0017_openai_compat.sql). A file is written in one
 * transaction, chunk by chunk as its caller hands them over: it exists whole or not at all, and
 * no more than one chunk is held here at a time.
 */
export class OpenAiFilesRepository {
  constructor(private readonly db: Db) {}

  async create(file: { id: string; userId: string; purpose: string; filename: string }, chunks: AsyncIterable<Buffer>): Promise<OpenAiFile> {
    return this.db.transaction((tx) => this.write(file, chunks, tx));
  }

  /** Writes the file in the caller's transaction (a batch's output files go with its finalizing). */
  async write(file: { id: string; userId: string; purpose: string; filename: string }, chunks: AsyncIterable<Buffer>, tx: Queryable): Promise<OpenAiFile> {
    await tx.query('INSERT INTO openai_files (id, user_id, purpose, filename, bytes) VALUES ($1, $2, $3, $4, 0)', [file.id, file.userId, file.purpose, file.filename]);
    let position = 0;
    let bytes = 0;
    for await (const chunk of chunks) {
      if (chunk.length === 0) continue;
      await tx.query('INSERT INTO openai_file_chunks (file_id, position, data) VALUES ($1, $2, $3)', [file.id, position++, chunk]);
      bytes += chunk.length;
    }
    const { rows } = await tx.query<FileRow>('UPDATE openai_files SET bytes = $2 WHERE id = $1 RETURNING *', [file.id, bytes]);
    return toFile(rows[0]!);
  }

  /** Scoped to its owner: someone else's file is indistinguishable from a missing one. */
  async get(userId: string, id: string): Promise<OpenAiFile | null> {
    const { rows } = await this.db.query<FileRow>('SELECT * FROM openai_files WHERE id = $1 AND user_id = $2', [id, userId]);
    return rows[0] ? toFile(rows[0]) : null;
  }

  /** Newest first, a page after the file `after` (OpenAI's cursor is an id). */
  async list(userId: string, options: { limit: number; after?: string; purpose?: string }): Promise<{ data: OpenAiFile[]; hasMore: boolean }> {
    const params: unknown[] = [userId, options.limit + 1];
    const after = options.after === undefined ? '' : ` AND ordinal < (SELECT ordinal FROM openai_files WHERE id = $${params.push(options.after)} AND user_id = $1)`;
    const purpose = options.purpose === undefined ? '' : ` AND purpose = $${params.push(options.purpose)}`;
    const { rows } = await this.db.query<FileRow>(`SELECT * FROM openai_files WHERE user_id = $1${after}${purpose} ORDER BY ordinal DESC LIMIT $2`, params);
    return { data: rows.slice(0, options.limit).map(toFile), hasMore: rows.length > options.limit };
  }

  /** False when the user has no such file. */
  async delete(userId: string, id: string): Promise<boolean> {
    const { rows } = await this.db.query('DELETE FROM openai_files WHERE id = $1 AND user_id = $2 RETURNING id', [id, userId]);
    return rows.length > 0;
  }

  /** The file's bytes in order, a few chunks per query: a file of any size costs a few MiB to read. */
  async *content(id: string): AsyncGenerator<Buffer> {
    for (let from = 0; ; from += CHUNKS_PER_READ) {
      const { rows } = await this.db.query<{ data: Uint8Array }>('SELECT data FROM openai_file_chunks WHERE file_id = $1 AND position >= $2 ORDER BY position LIMIT $3', [
        id,
        from,
        CHUNKS_PER_READ,
      ]);
      // pg gives a Buffer, PGlite a Uint8Array: the same bytes either way.
      for (const row of rows) yield Buffer.isBuffer(row.data) ? row.data : Buffer.from(row.data.buffer, row.data.byteOffset, row.data.byteLength);
      if (rows.length < CHUNKS_PER_READ) return;
    }
  }
}

function toFile(row: FileRow): OpenAiFile {
  return { id: row.id, userId: row.user_id, purpose: row.purpose, filename: row.filename, bytes: Number(row.bytes), createdAt: row.created_at };
}
