/*
 * `${VAR}` references in tool configuration (http tool headers, MCP server env and headers), so
 * that secrets live in the environment rather than in files. Pure: the environment is passed in.
 */

const REFERENCE = /\$\{([A-Za-z_][A-Za-z0-9_]*)\}/g;

export type SubstitutionResult = { ok: true; value: string } | { ok: false; missing: string[] };

/** Replaces every `${VAR}`; a variable that is not set (undefined) is reported, not replaced by ''. */
export function substituteEnvironment(template: string, env: Record<string, string | undefined>): SubstitutionResult {
  const missing: string[] = [];
  const value = template.replace(REFERENCE, (_match, name: string) => {
    const found = env[name];
    if (found === undefined) {
      missing.push(name);
      return '';
    }
    return found;
  });
  return missing.length ? { ok: false, missing: [...new Set(missing)] } : { ok: true, value };
}

/**
 * Substitutes every value of a string map. Returns the problems as `key: message` lines (naming
 * the variable, never a value) for the caller's load error.
 */
export function substituteEnvironmentInMap(
  values: Record<string, string>,
  env: Record<string, string | undefined>,
): { ok: true; values: Record<string, string> } | { ok: false; problems: { key: string; message: string }[] } {
  const resolved: Record<string, string> = {};
  const problems: { key: string; message: string }[] = [];
  for (const [key, template] of Object.entries(values)) {
    const result = substituteEnvironment(template, env);
    if (result.ok) resolved[key] = result.value;
    else problems.push({ key, message: `environment variable ${result.missing.map((name) => `"${name}"`).join(', ')} is not set` });
  }
  return problems.length ? { ok: false, problems } : { ok: true, values: resolved };
}
