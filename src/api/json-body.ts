import express, { type RequestHandler } from 'express';
import { AppError } from '../errors/app-error';
import { findUnstorableValue } from '../store/storable-json';

/**
 * Reads and checks a JSON body of at most `limitBytes`: JSON only (415), within the limit (413),
 * and nothing the database could not store (400). Mounted after authentication and
 * rate limits, so that a body is read only for whom may send it.
 */
export function readJsonBody(limitBytes: number): RequestHandler[] {
  return [requireJsonBody, express.json({ limit: limitBytes, strict: false }), refuseUnstorableInput];
}

/** A body in anything but JSON is a 415, not a confusing validation error about a missing field. */
const requireJsonBody: RequestHandler = (req, _res, next) => {
  const hasBody = Number(req.headers['content-length'] ?? 0) > 0 || req.headers['transfer-encoding'] !== undefined;
  if (hasBody && !req.is('application/json')) {
    throw new AppError('unsupported_media_type', 'request bodies must be JSON (Content-Type: application/json)');
  }
  next();
};

/** What PostgreSQL would refuse (a NUL, a lone surrogate, absurd nesting) is the client's 400, not our 500. */
const refuseUnstorableInput: RequestHandler = (req, _res, next) => {
  const problem = findUnstorableValue(req.body) ?? findUnstorableValue(req.query);
  if (problem) throw new AppError('invalid_request', `invalid request: ${problem.field}: ${problem.message}`, [problem]);
  next();
};
