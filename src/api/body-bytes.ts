import type { Request, RequestHandler } from 'express';
import { AppError } from '../errors/app-error';
import type { SubmissionSlots } from './submission-slots';

/** Seconds a request refused for want of body bytes is told to wait: bodies are read and stored in moments. */
const BODY_RETRY_AFTER_SECONDS = 1;

/** What each request holding body bytes gives back when it is done with its body. */
const held = new WeakMap<Request, () => void>();

/**
 * Takes the bytes of the request's body from `slots` (MAX_TURN_BODY_BYTES_IN_FLIGHT) before a
 * byte of it is read: its declared length, or `limitBytes` for a chunked body, which may be that
 * long. They are given back by {@link releaseBody} once what it asks is stored, or when the
 * answer is done or the client goes away, whatever happened (answered, refused, abandoned). One
 * that does not fit answers 503 with Retry-After unread. Bounded by bytes, not by requests: a
 * burst of small requests costs little, and is not refused for the sake of large ones.
 */
export function holdBodyBytes(slots: SubmissionSlots, limitBytes: number): RequestHandler {
  return (req, res, next) => {
    const declared = req.headers['content-length'] === undefined ? null : Number(req.headers['content-length']);
    const chunked = req.headers['transfer-encoding'] !== undefined;
    // No body, or one the parser refuses (413) before reading it.
    if ((!chunked && !declared) || (declared !== null && declared > limitBytes)) return next();
    // A limit above the whole budget still lets one request in, alone.
    const release = slots.tryTake(Math.min(declared ?? limitBytes, limitBytes, slots.limit));
    if (!release) {
      throw new AppError(
        'unavailable',
        `this API process is reading ${slots.limit} bytes of request bodies already (MAX_TURN_BODY_BYTES_IN_FLIGHT); try again shortly`,
        undefined,
        BODY_RETRY_AFTER_SECONDS,
      );
    }
    held.set(req, release);
    res.once('close', release);
    next();
  };
}

/**
 * The route is done with the request's body (what it asks is stored) and goes on waiting or
 * streaming: its bytes are given back, and the parsed body let go of, so that a request open for
 * a whole turn holds neither.
 */
export function releaseBody(req: Request): void {
  held.get(req)?.();
  held.delete(req);
  req.body = undefined;
}
