import { DEFAULT_INHERITED_ENV_VARS } from '@modelcontextprotocol/sdk/client/stdio.js';

/**
 * The environment of a stdio MCP server: the entry's `env` and PATH, nothing else. Never the
 * service's own: that holds the provider key, the database URL and the admin token, and a server
 * can print its environment (server-everything's `get-env` does).
 *
 * - PATH is the one variable taken from the service, so that `"command": "npx"` or `"uvx"` can
 *   be found; an entry may set its own PATH.
 * - HOME, USER, LOGNAME, SHELL and TERM, which the SDK's StdioClientTransport adds on its own
 *   (`getDefaultEnvironment()`, read from process.env), are not secrets, but we keep to "only
 *   what the entry gives", so that what a server sees can be read in mcp.json. They are masked
 *   with `undefined`, which Node's spawn leaves out. A server that needs HOME (npx wants a cache
 *   directory) gets it from its entry: `"env": {"HOME": "${HOME}"}`.
 */
export function stdioServerEnvironment(entryEnv: Record<string, string>, serviceEnv: Record<string, string | undefined>): Record<string, string | undefined> {
  const environment: Record<string, string | undefined> = {};
  for (const name of DEFAULT_INHERITED_ENV_VARS) environment[name] = undefined;
  if (serviceEnv.PATH !== undefined) environment.PATH = serviceEnv.PATH;
  return { ...environment, ...entryEnv };
}
