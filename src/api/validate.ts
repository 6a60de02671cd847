import type { z } from 'zod';
import { AppError, notFound } from '../errors/app-error';

/** Parses input with a zod schema; failures become 400 `invalid_request` naming each field. */
export function parseInput<S extends z.ZodType>(schema: S, input: unknown): z.infer<S> {
  const result = schema.safeParse(input);
  if (result.success) return result.data;
  const details = result.error.issues.map((issue) => ({
    field: issue.path.join('.') || '(body)',
    message: issue.message,
  }));
  const summary = details.map((detail) => `${detail.field}: ${detail.message}`).join('; ');
  throw new AppError('invalid_request', `invalid request: ${summary}`, details);
}

const ROUTE_ID = /^[A-Za-z0-9_-]{1,100}$/;

/**
 * A route's id (`conv_…`, `turn_…`). Anything unlike the ids this API hands out names nothing:
 * a plain 404, exactly as a missing id, and never a database error.
 */
export function parseRouteId(value: string | undefined, what: string): string {
  if (value === undefined || !ROUTE_ID.test(value)) throw notFound(what);
  return value;
}
