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

/**
 * When each code is answered, in a reader's words (docs/reference/errors.md): a new code does
 * not type-check until it says when.
 */
export const ERROR_MEANING: Record<AppErrorCode, string> = {
  unauthorized: 'No API key or session token, or one that is not valid (revoked, or never issued).',
  token_expired:
    'A session token past its `expiresAt` (over HTTP and at the websocket handshake): mint a new one with the API key and try again; the client package does so with a token provider.',
  forbidden:
    'The caller is known but may not do this: a route a session token may not use (it needs the API key), an Origin not in `ALLOWED_ORIGINS`, an admin route without the admin token.',
  not_found: "No such resource for this user: another user's conversation, turn or batch answers this too, never 403, so ids cannot be probed.",
  invalid_json: 'The body is not JSON (or not the JSON type the route takes).',
  invalid_request: 'The body, query or path fails validation: a missing or unknown field, a value out of its bounds.',
  unsupported_parameter:
    'A parameter Switchyard understands but cannot honour (an OpenAI setting such as `n` > 1 or built-in tools): refused rather than dropped, `param` naming it.',
  unsupported_media_type: 'A body that is not `application/json` (or `multipart/form-data` where a route takes files).',
  payload_too_large: "A body over the route's limit (`MAX_BODY_BYTES`, `MAX_CHAT_BODY_BYTES`, the file and batch limits).",
  conversation_busy: 'A turn was posted while the conversation has one active (`details.activeTurnId`); wait for its end or cancel it.',
  idempotency_conflict: 'An `Idempotency-Key` used before with a different body.',
  external_id_conflict: 'A conversation with this `externalId` already exists for the user (`details.conversationId`).',
  already_decided: 'An approval decision for a call someone already decided; the stored decision is in `details`.',
  conflict:
    "The resource is not in a state that allows this: a turn posted while calls of the caller's functions are unanswered (`details.toolCallIds`), a fork at a message it cannot start from, a response that is not its conversation's latest continued, an OpenAI batch retried.",
  rate_limited: 'Too many requests or open connections for this key (`Retry-After` says when to try again).',
  budget_exceeded:
    'A `reject` budget of the user or of the key is spent for its period: new work is refused until it resets or is raised (`details`); a `pause` budget parks the turn as `waiting_budget` instead.',
  unavailable: 'Redis or PostgreSQL cannot be reached, or the process is shutting down (`Retry-After`); a turn already recorded goes on by itself.',
  tool_failed: 'A tool invoked directly failed after its retries; its error is in `details`.',
  internal: 'A fault of the service itself, logged with the request id; the answer says no more.',
};

/** What `details` holds, by code, in the document's words. */
const DETAILS: Partial<Record<AppErrorCode, string>> = {
  invalid_request: 'names the fields at fault: `[{field, message}]` (a batch: `[{line, field?, message}]`)',
  unsupported_parameter: 'names the field at fault: `[{field, message}]`',
  conversation_busy: 'is `{activeTurnId}`',
  budget_exceeded:
    'A `reject` budget of the user or of the key is spent for its period: new work is refused until it resets or is raised (`details`); a `pause` budget parks the turn as `waiting_budget` instead.',
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
