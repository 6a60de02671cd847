import { randomUUID } from 'node:crypto';
import { createReadStream, createWriteStream, type WriteStream } from 'node:fs';
import { rm } from 'node:fs/promises';
import path from 'node:path';
import { once } from 'node:events';
import { finished } from 'node:stream/promises';
import type { BatchItem } from '../store/batch-item';
import { readJsonlLines } from './jsonl-lines';

/**
 * A submission's checked items on disk until the whole body has been read and checked: the
 * batch is then stored in one short transaction, read back from here. Holding the transaction
 * open while the client uploads instead would let one slow upload keep a database connection
 * (with the embedded PGlite, the only one) for as long as it likes.
 */
export class BatchSpool {
  private readonly out: WriteStream;
  private failure: Error | undefined;

  private constructor(private readonly file: string) {
    // Items are the user's data: readable by this process's user only.
    this.out = createWriteStream(file, { flags: 'wx', mode: 0o600 });
    this.out.on('error', (error) => (this.failure = error));
  }

  static create(dir: string): BatchSpool {
    return new BatchSpool(path.join(dir, `switchyard-batch-${randomUUID()}.jsonl`));
  }

  async write(item: BatchItem): Promise<void> {
    if (this.failure) throw this.failure;
    if (!this.out.write(`${JSON.stringify(item)}\n`)) await once(this.out, 'drain');
  }

  /** The items written, in order (once: ends the writing). */
  async *items(): AsyncGenerator<BatchItem> {
    this.out.end();
    await finished(this.out);
    if (this.failure) throw this.failure;
    const input = createReadStream(this.file);
    try {
      // Pulled chunk by chunk as the items are stored (readline would read ahead of a slow consumer).
      for await (const entry of readJsonlLines(input, { maxBytes: Infinity, maxLineBytes: Infinity })) {
        if ('text' in entry && entry.text) yield JSON.parse(entry.text) as BatchItem;
      }
    } finally {
      // Also when the reader stops early (a failed transaction): no file handle is left open.
      input.destroy();
    }
  }

  /** Removes the file, whatever happened. */
  async discard(): Promise<void> {
    if (!this.out.closed) {
      this.out.destroy();
      await once(this.out, 'close').catch(() => undefined);
    }
    await rm(this.file, { force: true });
  }
}
