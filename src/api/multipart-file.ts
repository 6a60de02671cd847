import { randomUUID } from 'node:crypto';
import { createReadStream, createWriteStream } from 'node:fs';
import { rm } from 'node:fs/promises';
import path from 'node:path';
import { finished } from 'node:stream/promises';
import type { Request } from 'express';
import busboy from 'busboy';
import { AppError } from '../errors/app-error';

/** A multipart upload's file, on disk until it is stored, and its other (small) fields. */
export interface ReceivedFile {
  filename: string;
  fields: Record<string, string>;
  /** The file's bytes, read back from disk in chunks of `chunkBytes`. */
  chunks(chunkBytes: number): AsyncIterable<Buffer>;
  discard(): Promise<void>;
}

/** Fields besides the file: OpenAI's upload has one (`purpose`), a few more are ignored. */
const MAX_FIELDS = 16;
const MAX_FIELD_BYTES = 1024;

/**
 * Reads a `multipart/form-data` upload with busboy: the file of field `fileField` goes to a file
 * of its own in `spoolDir` as it arrives (never held whole in memory; a larger one than
 * `maxFileBytes` is a 413 once its limit is passed), its other fields are kept. The fields may
 * come before or after the file (OpenAI's SDK sends `purpose` after it), so nothing is stored
 * before the whole body has been read.
 */
export async function receiveMultipartFile(req: Request, options: { fileField: string; maxFileBytes: number; spoolDir: string }): Promise<ReceivedFile> {
  if (!req.is('multipart/form-data')) throw new AppError('unsupported_media_type', 'an upload is multipart/form-data');
  const spool = path.join(options.spoolDir, `switchyard-upload-${randomUUID()}`);
  const discard = () => rm(spool, { force: true });
  let parser: busboy.Busboy;
  try {
    parser = busboy({ headers: req.headers, limits: { files: 1, fileSize: options.maxFileBytes, fields: MAX_FIELDS, fieldSize: MAX_FIELD_BYTES } });
  } catch (error) {
    throw new AppError('invalid_request', `the upload could not be read: ${(error as Error).message}`, [{ field: 'file', message: 'not multipart/form-data with a boundary' }]);
  }
  const fields: Record<string, string> = {};
  let filename: string | undefined;
  let written: Promise<void> | undefined;
  let tooLarge = false;
  const done = new Promise<void>((resolve, reject) => {
    parser.on('field', (name, value) => (fields[name] = value));
    parser.on('file', (name, stream, info) => {
      if (name !== options.fileField || written) return void stream.resume();
      filename = info.filename;
      // Items are the user's data: readable by this process's user only.
      const out = createWriteStream(spool, { flags: 'wx', mode: 0o600 });
      stream.on('limit', () => (tooLarge = true));
      stream.pipe(out);
      written = finished(out);
    });
    parser.on('close', resolve);
    parser.on('error', (error: Error) => reject(new AppError('invalid_request', `the upload could not be read: ${error.message}`, [{ field: 'file', message: error.message }])));
  });
  req.pipe(parser);
  try {
    await done;
    await written;
    if (tooLarge) throw new AppError('payload_too_large', `a file is at most ${options.maxFileBytes} bytes (OPENAI_MAX_FILE_BYTES)`);
    if (filename === undefined) throw new AppError('invalid_request', `invalid request: ${options.fileField}: a file is required`, [{ field: options.fileField, message: 'a file is required' }]);
  } catch (error) {
    await discard();
    throw error;
  }
  return {
    filename,
    fields,
    chunks: (chunkBytes) => createReadStream(spool, { highWaterMark: chunkBytes }),
    discard,
  };
}
