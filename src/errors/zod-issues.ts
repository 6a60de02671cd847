import type { z } from 'zod';

/**
 * The one wording of zod's complaints, wherever input is checked (HTTP bodies, websocket
 * frames, the environment, tool files, builtin tool arguments): each names the field the way
 * it is written in the input (`tools[1].timeoutMs`), so that whoever wrote it can go straight
 * to it, and says what is wrong in the same words as the JSON Schema checks of tool arguments.
 */
export interface FieldIssue {
  /** '' for the input as a whole. */
  field: string;
  message: string;
}

export function fieldIssues(issues: readonly z.core.$ZodIssue[], basePath: readonly PropertyKey[] = []): FieldIssue[] {
  return issues.flatMap((issue) => {
    const path = [...basePath, ...issue.path];
    if (issue.code === 'unrecognized_keys') return issue.keys.map((key) => ({ field: formatPath([...path, key]), message: 'is not a known field' }));
    // zod reports a missing field only in its wording (the input is not kept by default).
    if (issue.code === 'invalid_type' && / received undefined$/.test(issue.message)) return [{ field: formatPath(path), message: 'is required' }];
    return [{ field: formatPath(path), message: issue.message }];
  });
}

/** One line: `"a" is required; "b" is not a known field; "c[0]": too big`. */
export function describeZodIssues(issues: readonly z.core.$ZodIssue[], basePath: readonly PropertyKey[] = []): string {
  return fieldIssues(issues, basePath).map(describeFieldIssue).join('; ');
}

export function describeFieldIssue({ field, message }: FieldIssue): string {
  if (!field) return message;
  return message.startsWith('is ') ? `"${field}" ${message}` : `"${field}": ${message}`;
}

/** `['tools', 1, 'headers', 'Authorization']` → `tools[1].headers.Authorization`. */
export function formatPath(path: readonly PropertyKey[]): string {
  return path.reduce<string>((text, key) => {
    if (typeof key === 'number') return `${text}[${key}]`;
    return text ? `${text}.${String(key)}` : String(key);
  }, '');
}
