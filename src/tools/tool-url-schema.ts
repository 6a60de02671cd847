import { z } from 'zod';
import { hasUrlCredentials } from './url-credentials';

/**
 * Where an http tool or an MCP server is called: an http(s) URL without credentials, which
 * errors would carry to the model and the user (`headers` with a `${ENV_VAR}` carry them instead).
 */
export const toolUrlSchema = z
  .url({ protocol: /^https?$/, error: (issue) => (issue.input === undefined ? undefined : 'must be an http:// or https:// URL') })
  .refine((url) => !hasUrlCredentials(url), {
    message: 'must not carry credentials (user:password@), which errors would show; send them in "headers" with a ${ENV_VAR}',
  });
