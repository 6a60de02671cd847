import { z } from 'zod';
import { AppError, notFound } from '../errors/app-error';
import { describeFieldIssue, fieldIssues } from '../errors/zod-issues';

/**
 * Parses input with a zod schema (classic, or zod/mini as @switchyard/protocol writes the bodies
 * the clients send); failures become 400 `invalid_request` naming each field.
 */
export function parseInput<S extends z.core.$ZodType>(schema: S, input: unknown): z.output<S> {
  const result = z.safeParse(schema, input);
  if (result.success) return result.data;
  const issues = fieldIssues(result.error.issues);
  const details = issues.map((issue) => ({ field: issue.field || '(body)', message: issue.message }));
  throw new AppError('invalid_request', `invalid request: ${issues.map(describeFieldIssue).join('; ')}`, details);
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
