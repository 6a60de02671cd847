import pino, { type Logger } from 'pino';

/** Credential headers, in the spellings HTTP libraries and tool files use. */
const SECRET_HEADERS = ['authorization', 'Authorization', 'proxy-authorization', 'Proxy-Authorization', 'cookie', 'Cookie', 'x-api-key', 'X-Api-Key', 'X-API-Key'];

/**
 * Structured logs with secrets removed at the source: authorization headers, API keys,
 * provider keys and tickets never reach the output, whatever object is logged. Headers are
 * redacted wherever a `headers` object sits up to three levels deep (a request, an error's
 * request, a tool's definition).
 */
export const REDACTED_PATHS = [
  ...['headers', '*.headers', '*.*.headers'].flatMap((headers) => SECRET_HEADERS.map((name) => `${headers}["${name}"]`)),
  'authorization',
  'apiKey',
  '*.apiKey',
  'LLM_API_KEY',
  '*.LLM_API_KEY',
  'ADMIN_TOKEN',
  '*.ADMIN_TOKEN',
  'ticket',
  '*.ticket',
  'token',
  '*.token',
];

export function createLogger(level: string, destination?: pino.DestinationStream): Logger {
  return pino({ level, redact: { paths: REDACTED_PATHS, censor: '[redacted]' }, base: { pid: process.pid } }, destination);
}
