import { unstorableTextProblem } from './storable-text';
import { formatPath } from '../errors/zod-issues';

/**
 * Values JSON can carry but PostgreSQL cannot store: a NUL character (refused in text and in
 * jsonb) and a lone UTF-16 surrogate (refused in jsonb); and nesting so deep that serialising
 * it overflows the stack (`JSON.stringify` recurses). Found at the boundary, they are a 400
 * naming the field instead of a 500 from the database. Pure.
 */

/** Deeper than any request or tool answer needs; far below where `JSON.stringify` overflows. */
export const MAX_JSON_DEPTH = 100;

export interface UnstorableValue {
  /** Dotted path like the validation errors' `field` (`metadata.notes.0`), `(body)` for the root. */
  field: string;
  message: string;
}

const problemOf = unstorableTextProblem;

/**
 * A string (value or key) that cannot be stored, or a value nested deeper than `maxDepth`;
 * null when everything can be. Walks with an explicit stack, so that the check
 * itself cannot overflow on the input it guards against.
 */
export function findUnstorableValue(value: unknown, maxDepth = MAX_JSON_DEPTH): UnstorableValue | null {
  const pending: { value: unknown; path: PropertyKey[] }[] = [{ value, path: [] }];
  const fieldOf = (path: PropertyKey[]) => formatPath(path) || '(body)';
  for (let item = pending.pop(); item; item = pending.pop()) {
    if (typeof item.value === 'string') {
      const problem = problemOf(item.value);
      if (problem) return { field: fieldOf(item.path), message: problem };
      continue;
    }
    if (typeof item.value !== 'object' || item.value === null) continue;
    if (item.path.length >= maxDepth) return { field: fieldOf(item.path), message: `nested deeper than ${maxDepth} levels` };
    for (const [key, child] of Object.entries(item.value)) {
      const problem = problemOf(key);
      if (problem) return { field: fieldOf(item.path), message: `a key ${problem}` };
      pending.push({ value: child, path: [...item.path, Array.isArray(item.value) ? Number(key) : key] });
    }
  }
  return null;
}
