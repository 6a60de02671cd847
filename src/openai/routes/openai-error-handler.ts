import type { ErrorRequestHandler, RequestHandler } from 'express';
import type { Logger } from 'pino';
import type { AppError, AppErrorCode } from '../../errors/app-error';
import { ERROR_STATUS } from '../../api/contract/error-contract';
import { prepareErrorAnswer } from '../../api/error-handler';

/** OpenAI's error `type` for each status its SDK maps to an error class. */
const OPENAI_TYPE: Record<number, string> = {
  400: 'invalid_request_error',
  401: 'invalid_request_error',
  403: 'permission_error',
  404: 'invalid_request_error',
  409: 'invalid_request_error',
  413: 'invalid_request_error',
  415: 'invalid_request_error',
  429: 'requests',
  500: 'server_error',
  502: 'server_error',
  503: 'server_error',
};

/** Codes OpenAI spells its own way; the rest keep Switchyard's. */
const OPENAI_CODE: Partial<Record<AppErrorCode, string>> = {
  unauthorized: 'invalid_api_key',
  rate_limited: 'rate_limit_exceeded',
  budget_exceeded: 'budget_exceeded',
  internal: 'server_error',
};

/** An error answer of the OpenAI routes: `{error: {message, type, param, code}}`. */
export function openAiErrorBody(error: AppError): { status: number; body: { error: { message: string; type: string; param: string | null; code: string } } } {
  const status = ERROR_STATUS[error.code];
  return {
    status,
    body: { error: { message: error.message, type: OPENAI_TYPE[status] ?? 'invalid_request_error', param: paramOf(error.details), code: OPENAI_CODE[error.code] ?? error.code } },
  };
}

/**
 * The error handler of `/openai/v1`: the same statuses as the rest of the API (and so the error
 * classes of OpenAI's SDK: 400, 401, 404, 409, 413, 429, 5xx), in OpenAI's shape. Mounted after
 * the OpenAI routers, before the API's own handler.
 */
export function openAiErrorHandler(logger: Logger): ErrorRequestHandler {
  return (thrown, req, res, _next) => {
    const error = prepareErrorAnswer(thrown, req, res, logger);
    // A stream that failed after its headers: nothing but its end can be said.
    if (res.headersSent) return void res.end();
    const { status, body } = openAiErrorBody(error);
    res.status(status).json(body);
  };
}

/** A path under `/openai/v1` that names no route: OpenAI's 404. */
export const openAiNotFound: RequestHandler = (req, res) => {
  res.status(404).json({ error: { message: `Invalid URL (${req.method} ${req.originalUrl})`, type: 'invalid_request_error', param: null, code: 'not_found' } });
};

/** The first field the details name: OpenAI's `param`. */
function paramOf(details: unknown): string | null {
  if (!Array.isArray(details)) return null;
  const field = (details[0] as { field?: unknown } | undefined)?.field;
  return typeof field === 'string' && field !== '(body)' ? field : null;
}
