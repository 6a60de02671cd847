import type { ErrorRequestHandler, RequestHandler } from 'express';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Logger } from 'pino';
import { AppError } from '../errors/app-error';
import { isBackendUnavailable } from '../errors/backend-unavailable';
import { ERROR_STATUS } from './contract/error-contract';

/** The one place where errors become HTTP answers: `{error: {code, message, details?}}`. */
export function errorHandler(logger: Logger): ErrorRequestHandler {
  return (thrown, req, res, _next) => {
    const error = prepareErrorAnswer(thrown, req, res, logger);
    res.status(ERROR_STATUS[error.code]).json({
      error: { code: error.code, message: error.message, ...(error.details !== undefined ? { details: error.details } : {}) },
    });
  };
}

/**
 * What every error answer does before its body, whatever its shape (the OpenAI routes have their
 * own): the error as an AppError, an unexpected one logged, and the headers set.
 */
export function prepareErrorAnswer(thrown: unknown, req: IncomingMessage, res: ServerResponse, logger: Logger): AppError {
  const error = toAppError(thrown);
  if (error.code === 'internal') logger.error({ err: thrown }, 'request failed');
  // Refused before its body was read (credentials, a rate limit, a declared length over the
  // limit): the connection closes after the answer, instead of waiting for a body nobody reads
  // (a client may declare a megabyte and send ten bytes).
  if (!res.headersSent && hasUnreadBody(req)) res.setHeader('Connection', 'close');
  if (error.retryAfter !== undefined && !res.headersSent) res.setHeader('Retry-After', String(error.retryAfter));
  return error;
}

function hasUnreadBody(req: IncomingMessage): boolean {
  const declaresBody = Number(req.headers['content-length'] ?? 0) > 0 || req.headers['transfer-encoding'] !== undefined;
  return declaresBody && !req.complete;
}

export const notFoundHandler: RequestHandler = (req, _res, next) => {
  next(new AppError('not_found', `no route for ${req.method} ${req.path}`));
};

function toAppError(thrown: unknown): AppError {
  if (AppError.isInstance(thrown)) return thrown;
  // body-parser's errors carry a `type`; map them rather than leak a 500 or a stack trace.
  const type = (thrown as { type?: string } | null)?.type;
  if (type === 'entity.too.large') return new AppError('payload_too_large', 'the request body is too large');
  if (type === 'entity.parse.failed') return new AppError('invalid_json', 'the request body is not valid JSON');
  if (type === 'encoding.unsupported' || type === 'charset.unsupported') {
    return new AppError('unsupported_media_type', 'unsupported body encoding');
  }
  if (isBackendUnavailable(thrown)) return new AppError('unavailable', 'a backing service is unavailable; try again shortly', undefined, 5);
  // Other request errors of body-parser and the router (a body that does not decompress, a
  // path with a broken %-escape) are http-errors with a 4xx status: the client's, not ours.
  if (isClientHttpError(thrown)) return new AppError('invalid_request', `the request could not be read: ${thrown.message}`);
  return new AppError('internal', 'internal error');
}

function isClientHttpError(thrown: unknown): thrown is Error {
  const status = (thrown as { status?: unknown } | null)?.status;
  return thrown instanceof Error && typeof status === 'number' && status >= 400 && status < 500;
}
