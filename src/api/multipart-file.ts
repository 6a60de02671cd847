import { randomUUID } from 'node:crypto';
import { createReadStream, createWriteStream, type WriteStream } from 'node:fs';
import { rm } from 'node:fs/promises';
import path from 'node:path';
import { finished, pipeline } from 'node:stream/promises';
import type { Request } from 'express';
import busboy from 'busboy';
import { AppError } from '../errors/app-error';
import { unstorableTextProblem } from '../storable/storable-text';

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
 * 1. busboy parses the body as it arrives; the part of `fileField` is piped to the spool file,
 *    any other file part is read and dropped.
 * 2. The upload fails at the first of: a form that is malformed or ends early (busboy reports
 *    it on the parser and on the part's stream: both are listened to, since an unheard stream
 *    error would end the process), the spool file failing, or the request closing before its
 *    end (the client left, or REQUEST_TIMEOUT_MS passed and Node answered 408).
 * 3. A failed upload lets go of everything it opened: the parser, the spool file's descriptor,
 *    the file itself. Only a whole form comes back, its filename checked like any stored text.
 */
export async function receiveMultipartFile(req: Request, options: { fileField: string; maxFileBytes: number; spoolDir: string }): Promise<ReceivedFile> {
  if (!req.is('multipart/form-data')) throw new AppError('unsupported_media_type', 'an upload is multipart/form-data');
  let parser: busboy.Busboy;
  try {
    parser = busboy({ headers: req.headers, limits: { files: 1, fileSize: options.maxFileBytes, fields: MAX_FIELDS, fieldSize: MAX_FIELD_BYTES } });
  } catch (error) {
    throw new AppError('invalid_request', `the upload could not be read: ${(error as Error).message}`, [{ field: 'file', message: 'not multipart/form-data with a boundary' }]);
  }
  const spool = path.join(options.spoolDir, `switchyard-upload-${randomUUID()}`);
  const fields: Record<string, string> = {};
  let filename: string | undefined;
  let out: WriteStream | undefined;
  let written: Promise<void> | undefined;
  let tooLarge = false;
  let fail: (error: AppError | Error) => void = () => {};
  // Settled by the first outcome: the failures that follow (the parser's, then its part's) change nothing.
  const received = new Promise<void>((resolve, reject) => {
    fail = reject;
    parser.on('close', resolve);
  });
  parser.on('error', (error: Error) => fail(unreadable(error)));
  parser.on('field', (name, value) => (fields[name] = value));
  // At most one file part (`files: 1`): the first, whatever its field; any later one is skipped by busboy.
  parser.on('file', (name, stream, info) => {
    if (name !== options.fileField) {
      stream.on('error', (error) => fail(unreadable(error)));
      return void stream.resume();
    }
    filename = info.filename;
    stream.on('limit', () => (tooLarge = true));
    // Items are the user's data: readable by this process's user only.
    const file = createWriteStream(spool, { flags: 'wx', mode: 0o600 });
    out = file;
    // pipeline hears both streams' errors and destroys the other stream on either; the spool
    // file's own failure (a full disk) is ours, not the client's.
    written = pipeline(stream, file);
    written.catch((error: Error) => fail(file.errored === error ? error : unreadable(error)));
  });
  // A request cut off shows as its 'close' before its end (Node emits its error to its own listeners only).
  const onRequestClose = () => {
    if (!req.complete) fail(cutOff());
  };
  req.on('close', onRequestClose);
  // Gone already (the client left while it was authenticated): there is nothing left to read.
  if (req.destroyed) fail(cutOff());
  else req.pipe(parser);
  try {
    await received;
    await written;
    if (tooLarge) throw new AppError('payload_too_large', `a file is at most ${options.maxFileBytes} bytes (OPENAI_MAX_FILE_BYTES)`);
    if (filename === undefined)
      throw new AppError('invalid_request', `invalid request: ${options.fileField}: a file is required`, [{ field: options.fileField, message: 'a file is required' }]);
    const problem = unstorableTextProblem(filename);
    if (problem) throw new AppError('invalid_request', `invalid request: filename: ${problem}`, [{ field: 'filename', message: problem }]);
  } catch (error) {
    req.unpipe(parser);
    parser.destroy();
    await closeAndRemove(out, spool);
    throw error;
  } finally {
    req.off('close', onRequestClose);
  }
  return {
    filename,
    fields,
    chunks: (chunkBytes) => createReadStream(spool, { highWaterMark: chunkBytes }),
    discard: () => closeAndRemove(out, spool),
  };
}

function unreadable(error: Error): AppError {
  return new AppError('invalid_request', `the upload could not be read: ${error.message}`, [{ field: 'file', message: error.message }]);
}

function cutOff(): AppError {
  return new AppError('invalid_request', 'the upload was cut off before its end; nothing was stored', [{ field: 'file', message: 'the body ended before the form did' }]);
}

/** Closes the spool file's descriptor (if it is still open) and deletes the file. */
async function closeAndRemove(out: WriteStream | undefined, spool: string): Promise<void> {
  if (out && !out.closed) {
    out.destroy();
    await finished(out).catch(() => undefined);
  }
  await rm(spool, { force: true });
}
