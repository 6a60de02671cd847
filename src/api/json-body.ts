import { isUtf8 } from 'node:buffer';
import express, { type RequestHandler } from 'express';
import { AppError } from '../errors/app-error';
import { findUnstorableValue } from '../storable/storable-json';

/**
 * Reads and checks a JSON body of at most `limitBytes`: JSON only (415), within the limit (413),
 * UTF-8 (400), and nothing the database could not store (400). Mounted after authentication and
 * rate limits, so that a body is read only for those who may send it.
 */
export function readJsonBody(limitBytes: number): RequestHandler[] {
  return [requireJsonBody, express.json({ limit: limitBytes, strict: false, verify: refuseInvalidUtf8 }), refuseUnstorableInput];
}

/** A body in anything but JSON is a 415, not a confusing validation error about a missing field. */
const requireJsonBody: RequestHandler = (req, _res, next) => {
  const hasBody = Number(req.headers['content-length'] ?? 0) > 0 || req.headers['transfer-encoding'] !== undefined;
  if (hasBody && !req.is('application/json')) {
    throw new AppError('unsupported_media_type', 'request bodies must be JSON (Content-Type: application/json)');
  }
  next();
};

/**
 * The JSON decoder replaces bytes that are not UTF-8 with U+FFFD: refused here, the client
 * learns of its encoding bug instead of finding its text stored mangled. (UTF-16 bodies, which
 * body-parser also takes, are decoded by their declared charset and checked for lone surrogates
 * by refuseUnstorableInput.)
 */
function refuseInvalidUtf8(_req: unknown, _res: unknown, body: Buffer, encoding: string): void {
  if (!/^utf-?8$/i.test(encoding) || isUtf8(body)) return;
  throw new AppError('invalid_request', 'the request body is not valid UTF-8', [{ field: 'body', message: 'not valid UTF-8' }]);
}

/** What PostgreSQL would refuse (a NUL, a lone surrogate, absurd nesting) is the client's 400, not our 500. */
const refuseUnstorableInput: RequestHandler = (req, _res, next) => {
  const problem = findUnstorableValue(req.body) ?? findUnstorableValue(req.query);
  if (problem) throw new AppError('invalid_request', `invalid request: ${problem.field}: ${problem.message}`, [problem]);
  next();
};
