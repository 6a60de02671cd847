import type { z } from 'zod';

/**
 * Wording for load errors of tool files and mcp.json: one line naming each field the way it is
 * written in the file (`tools[1].timeoutMs`), so that the operator can go straight to it.
 */
export function describeConfigIssues(issues: readonly z.core.$ZodIssue[], basePath: PropertyKey[] = []): string {
  const lines: string[] = [];
  for (const issue of issues) {
    const path = [...basePath, ...issue.path];
    if (issue.code === 'unrecognized_keys') {
      for (const key of issue.keys) lines.push(`"${formatConfigPath([...path, key])}" is not a known field`);
    } else if (issue.code === 'invalid_type' && / received undefined$/.test(issue.message)) {
      lines.push(`"${formatConfigPath(path)}" is required`);
    } else {
      lines.push(path.length ? `"${formatConfigPath(path)}": ${issue.message}` : issue.message);
    }
  }
  return lines.join('; ');
}

/** `['tools', 1, 'headers', 'Authorization']` → `tools[1].headers.Authorization`. */
export function formatConfigPath(path: readonly PropertyKey[]): string {
  return path.reduce<string>((text, key) => {
    if (typeof key === 'number') return `${text}[${key}]`;
    return text ? `${text}.${String(key)}` : String(key);
  }, '');
}
