import { z } from 'zod';
import type { ZodOpenApiOperationObject, ZodOpenApiParameters, ZodOpenApiPathsObject, ZodOpenApiRequestBodyObject, ZodOpenApiResponsesObject } from 'zod-openapi';

type Method = 'get' | 'post' | 'delete';

/** One `/openai/v1` route as the document shows it. */
interface OpenAiOperationSpec {
  operationId: string;
  summary: string;
  description?: string;
  requestParams?: ZodOpenApiParameters;
  jsonBody?: z.ZodType;
  requestBody?: ZodOpenApiRequestBodyObject;
  responses: ZodOpenApiResponsesObject;
  /** Statuses the route answers besides 400, 401, 403, 429, 500 and 503. */
  errors?: (404 | 409 | 413 | 415)[];
}

/** OpenAI's error shape, which every `/openai/v1` error answer has. */
export const openAiErrorSchema = z
  .object({
    error: z.object({
      message: z.string(),
      type: z.string().meta({ description: "OpenAI's error type: `invalid_request_error`, `requests` (429), `server_error`." }),
      param: z.string().nullable(),
      code: z.string().nullable(),
    }),
  })
  .meta({ id: 'OpenAiError', description: "OpenAI's error shape `{error: {message, type, param, code}}`." });

const STATUS_TEXT: Record<number, string> = {
  400: "Bad request (the SDK's BadRequestError)",
  401: 'A missing or wrong API key (AuthenticationError)',
  403: 'A session token, which these routes do not take: they need the API key (PermissionDeniedError)',
  404: 'Not found, or not yours (NotFoundError)',
  409: 'Conflict (ConflictError)',
  413: 'Too large',
  415: 'Unsupported media type',
  429: 'Too many requests, with Retry-After (RateLimitError)',
  500: 'Internal error (InternalServerError)',
  503: 'A backing service is unavailable, with Retry-After (InternalServerError)',
};
const retryAfter = z.object({ 'Retry-After': z.string().meta({ description: 'Seconds to wait before trying again.' }) });

/**
 * The document's paths of the OpenAI-compatible routes: each with the API key and OpenAI's error
 * answers, 403 included (a session token authenticates, and no route here is in its scope).
 */
export function documentOpenAiPaths(routes: Record<string, Partial<Record<Method, OpenAiOperationSpec>>>): ZodOpenApiPathsObject {
  const paths: ZodOpenApiPathsObject = {};
  for (const [path, methods] of Object.entries(routes)) {
    paths[path] = {};
    for (const [method, spec] of Object.entries(methods) as [Method, OpenAiOperationSpec][]) paths[path][method] = operation(spec);
  }
  return paths;
}

function operation(spec: OpenAiOperationSpec): ZodOpenApiOperationObject {
  const { jsonBody, requestBody, errors = [], responses, ...rest } = spec;
  const statuses = [...new Set([400, 401, 403, 429, 500, 503, ...(jsonBody || requestBody ? [413, 415] : []), ...errors])].sort((a, b) => a - b);
  const errorAnswers: ZodOpenApiResponsesObject = {};
  for (const status of statuses) {
    errorAnswers[`${status}` as `4${string}`] = {
      description: STATUS_TEXT[status]!,
      ...(status === 429 || status === 503 ? { headers: retryAfter } : {}),
      content: { 'application/json': { schema: openAiErrorSchema } },
    };
  }
  return {
    ...rest,
    tags: ['OpenAI-compatible'],
    security: [{ apiKey: [] }],
    ...(jsonBody ? { requestBody: { required: true, content: { 'application/json': { schema: jsonBody } } } } : requestBody ? { requestBody } : {}),
    responses: { ...responses, ...errorAnswers },
  };
}

/** Seconds since the epoch, as OpenAI writes times. */
export const unixSeconds = z.number().int();
export const toUnixSeconds = (date: Date | string) => Math.floor((typeof date === 'string' ? Date.parse(date) : date.getTime()) / 1000);

/** OpenAI's page of a list: `{object: "list", data, first_id, last_id, has_more}`. */
export function openAiListOf<T extends z.ZodType>(item: T) {
  return z.object({ object: z.literal('list'), data: z.array(item), first_id: z.string().nullable(), last_id: z.string().nullable(), has_more: z.boolean() });
}

/** A page as OpenAI lists it, from items with ids. */
export function openAiPage<T extends { id: string }>(
  data: T[],
  hasMore: boolean,
): { object: 'list'; data: T[]; first_id: string | null; last_id: string | null; has_more: boolean } {
  return { object: 'list', data, first_id: data[0]?.id ?? null, last_id: data.at(-1)?.id ?? null, has_more: hasMore };
}
