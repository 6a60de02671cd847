import { z } from 'zod';
import type { ZodOpenApiResponsesObject } from 'zod-openapi';
import type { AppErrorCode } from '../../errors/app-error';

/** The HTTP status of each error code: the error handler answers with it, the document lists it. */
export const ERROR_STATUS: Record<AppErrorCode, number> = {
  unauthorized: 401,
  token_expired: 401,
  forbidden: 403,
  not_found: 404,
  invalid_json: 400,
  invalid_request: 400,
  unsupported_parameter: 400,
  unsupported_media_type: 415,
  payload_too_large: 413,
  conversation_busy: 409,
  idempotency_conflict: 409,
  external_id_conflict: 409,
  already_decided: 409,
  conflict: 409,
  rate_limited: 429,
  budget_exceeded: 429,
  unavailable: 503,
  tool_failed: 502,
  internal: 500,
};

/** What `details` holds, by code, in the document's words. */
const DETAILS: Partial<Record<AppErrorCode, string>> = {
  invalid_request: 'names the fields at fault: `[{field, message}]` (a batch: `[{line, field?, message}]`)',
  unsupported_parameter: 'names the field at fault: `[{field, message}]`',
  conversation_busy: 'is `{activeTurnId}`',
  budget_exceeded: 'is `{limit: {usd} | {tokens}, spent, resetsAt, onExceeded}` (resetsAt null for a total budget)',
  external_id_conflict: 'is `{conversationId}` of the conversation that has this externalId',
  already_decided: 'is the stored decision `{toolCallId, approved, reason, args, decidedAt}`',
  tool_failed: "is the tool's error `{code, message, …}` with `attempts` and `durationMs`",
  unavailable: 'is `{turnId}` of the recorded turn when a turn was posted while Redis is unreachable',
};

const STATUS_TEXT: Record<number, string> = {
  400: 'Bad request',
  401: 'Unauthorized',
  403: 'Forbidden',
  404: 'Not found',
  409: 'Conflict',
  413: 'Payload too large',
  415: 'Unsupported media type',
  429: 'Too many requests',
  500: 'Internal error',
  502: 'The tool failed',
  503: 'Unavailable',
};

/** `{error: {code, message, details?}}` with `code` one of `codes`. */
function errorBodySchema(codes: readonly [AppErrorCode, ...AppErrorCode[]]) {
  return z.object({
    error: z.object({
      code: z.enum(codes),
      message: z.string(),
      details: z.unknown().optional(),
    }),
  });
}

/** Every error answer: the shape of `{"error": …}` whatever its code. */
export const errorResponseSchema = errorBodySchema(Object.keys(ERROR_STATUS) as [AppErrorCode, ...AppErrorCode[]]).meta({
  id: 'ErrorResponse',
  description: 'Every error answer: `{"error": {"code", "message", "details"?}}`.',
});

const retryAfter = z.object({ 'Retry-After': z.string().meta({ description: 'Seconds to wait before trying again.' }) });

/** The error answers of a route, by status, each naming the codes it may carry there. */
export function errorResponses(codes: Iterable<AppErrorCode>): ZodOpenApiResponsesObject {
  const byStatus = new Map<number, AppErrorCode[]>();
  for (const code of new Set(codes)) byStatus.set(ERROR_STATUS[code], [...(byStatus.get(ERROR_STATUS[code]) ?? []), code]);
  const responses: ZodOpenApiResponsesObject = {};
  for (const [status, statusCodes] of [...byStatus].sort(([a], [b]) => a - b)) {
    const details = statusCodes.flatMap((code) => (DETAILS[code] ? [`With \`${code}\`, \`details\` ${DETAILS[code]}.`] : []));
    responses[`${status}` as `4${string}`] = {
      description: [`${STATUS_TEXT[status]}: ${statusCodes.map((code) => `\`${code}\``).join(', ')}.`, ...details].join(' '),
      ...(status === 429 || status === 503 ? { headers: retryAfter } : {}),
      content: { 'application/json': { schema: errorBodySchema(statusCodes as [AppErrorCode, ...AppErrorCode[]]) } },
    };
  }
  return responses;
}
