import { TextDecoder } from 'node:util';
import { AppError } from '../errors/app-error';

export type JsonlLine =
  /** A line's text, decoded (blank lines too: they still count for the line numbers). */
  | { line: number; text: string }
  /** A line longer than `maxLineBytes`: its bytes were dropped as they came. */
  | { line: number; tooLong: true };

export interface JsonlLimits {
  /** The whole body (MAX_BATCH_BYTES): past it, 413. */
  maxBytes: number;
  /** One line (MAX_BATCH_JSON_BYTES): a longer one is reported, never held. */
  maxLineBytes: number;
}

const NEWLINE = 0x0a;

/**
 * Splits a JSONL body into its lines as its bytes arrive, so that at most one line is held
 * at a time. Lines are cut at the newline byte (never part of a multi-byte UTF-8 character)
 * and each is decoded strictly: a body that is not UTF-8 is refused, never stored with
 * replacement characters.
 */
export async function* readJsonlLines(body: AsyncIterable<Buffer>, limits: JsonlLimits): AsyncGenerator<JsonlLine> {
  const decoder = new TextDecoder('utf-8', { fatal: true });
  let total = 0;
  let line = 1;
  let pieces: Buffer[] = [];
  let lineBytes = 0;
  let tooLong = false;
  const take = (piece: Buffer) => {
    lineBytes += piece.length;
    if (tooLong) return;
    if (lineBytes > limits.maxLineBytes) {
      tooLong = true;
      pieces = [];
    } else if (piece.length > 0) {
      pieces.push(piece);
    }
  };
  const cut = (): JsonlLine => {
    const done: JsonlLine = tooLong ? { line, tooLong: true } : { line, text: decode(decoder, pieces, line) };
    line++;
    pieces = [];
    lineBytes = 0;
    tooLong = false;
    return done;
  };
  for await (const chunk of body) {
    total += chunk.length;
    if (total > limits.maxBytes) {
      throw new AppError('payload_too_large', `a batch submission is at most ${limits.maxBytes} bytes (MAX_BATCH_BYTES); split it into several batches`);
    }
    let from = 0;
    for (let at = chunk.indexOf(NEWLINE); at !== -1; at = chunk.indexOf(NEWLINE, from)) {
      take(chunk.subarray(from, at));
      yield cut();
      from = at + 1;
    }
    take(chunk.subarray(from));
  }
  if (lineBytes > 0) yield cut();
}

function decode(decoder: TextDecoder, pieces: Buffer[], line: number): string {
  try {
    return decoder.decode(pieces.length === 1 ? pieces[0] : Buffer.concat(pieces));
  } catch {
    throw new AppError('invalid_request', `invalid batch: line ${line}: not valid UTF-8; nothing was stored`, [{ line, message: 'not valid UTF-8' }]);
  }
}
