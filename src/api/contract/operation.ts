import type { z } from 'zod';
import type {
  ZodOpenApiOperationObject,
  ZodOpenApiParameters,
  ZodOpenApiPathsObject,
  ZodOpenApiRequestBodyObject,
  ZodOpenApiResponseObject,
  ZodOpenApiResponsesObject,
} from 'zod-openapi';
import type { AppErrorCode } from '../../errors/app-error';
import { sessionTokenMayUse } from '../session-scope';
import { errorResponses } from './error-contract';

/** Who may call a route: a user (API key, or a session token where its scope allows), the admin, anyone. */
type Access = 'user' | 'admin' | 'public';
type Method = 'get' | 'post' | 'put' | 'patch' | 'delete';

/** One route as the document shows it; the errors of its access and body are added by {@link documentPaths}. */
interface OperationSpec {
  operationId: string;
  summary: string;
  description?: string;
  access: Access;
  requestParams?: ZodOpenApiParameters;
  /** A JSON body, read by the JSON body parser (its errors apply). */
  jsonBody?: z.core.$ZodType;
  /** A body in other forms (a batch: JSON or JSONL); the body parser's errors apply as to `jsonBody`. */
  requestBody?: ZodOpenApiRequestBodyObject;
  responses: ZodOpenApiResponsesObject;
  /** Codes the route answers besides those of its access and body. */
  errors?: AppErrorCode[];
}

/** A route's operations by path template (`/v1/turns/{id}`) and method. */
type RouteOperations = Record<string, Partial<Record<Method, OperationSpec>>>;

/** What every route of an access answers whatever it does: refused credentials, limits, outages. */
const ACCESS_ERRORS: Record<Access, AppErrorCode[]> = {
  // A query (or body) that fails its checks is `invalid_request` on every authenticated route.
  user: ['invalid_request', 'unauthorized', 'rate_limited', 'unavailable', 'internal'],
  // While ADMIN_TOKEN is unset, the admin routes answer 404 as if they did not exist.
  admin: ['not_found', 'invalid_request', 'unauthorized', 'rate_limited', 'unavailable', 'internal'],
  public: [],
};
const BODY_ERRORS: AppErrorCode[] = ['invalid_json', 'invalid_request', 'payload_too_large', 'unsupported_media_type'];

/** The document's paths for one area (its tag): each operation with its security and every error it can answer. */
export function documentPaths(tag: string, routes: RouteOperations): ZodOpenApiPathsObject {
  const paths: ZodOpenApiPathsObject = {};
  for (const [path, methods] of Object.entries(routes)) {
    paths[path] = {};
    for (const [method, spec] of Object.entries(methods) as [Method, OperationSpec][]) paths[path][method] = operation(tag, method, path, spec);
  }
  return paths;
}

function operation(tag: string, method: Method, path: string, spec: OperationSpec): ZodOpenApiOperationObject {
  const { access, jsonBody, requestBody, errors = [], responses, ...rest } = spec;
  const sessionTokenToo = access === 'user' && sessionTokenMayUse(method.toUpperCase(), path.replace(/\{[^}]+\}/g, 'x'));
  const codes = [
    ...ACCESS_ERRORS[access],
    // A session token on a route beyond its scope; on one within it, past its lifetime.
    ...(access === 'user' ? (sessionTokenToo ? (['token_expired'] as const) : (['forbidden'] as const)) : []),
    ...(jsonBody || requestBody ? BODY_ERRORS : []),
    ...errors,
  ];
  return {
    ...rest,
    tags: [tag],
    security: access === 'public' ? [] : access === 'admin' ? [{ adminToken: [] }] : [{ apiKey: [] }, ...(sessionTokenToo ? [{ sessionToken: [] }] : [])],
    ...(jsonBody ? { requestBody: { required: true, content: { 'application/json': { schema: jsonBody } } } } : requestBody ? { requestBody } : {}),
    responses: { ...responses, ...errorResponses(codes) },
  };
}

/** A JSON answer. */
export function jsonResponse(description: string, schema: z.core.$ZodType): ZodOpenApiResponseObject {
  return { description, content: { 'application/json': { schema } } };
}

/** A stream of server-sent events; what each `data:` holds is in `description`. */
export function eventStreamResponse(description: string): ZodOpenApiResponseObject {
  return { description, content: { 'text/event-stream': { schema: { type: 'string' } } } };
}
