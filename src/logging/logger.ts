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

/**
 * The process's logger as configured: JSON lines on stdout, or with LOG_FORMAT=pretty one
 * readable line an entry (time, level, message, then the fields), written synchronously so
 * that it keeps its place among what the process prints itself (the start banner).
 */
export function createConfiguredLogger(config: { LOG_LEVEL: string; LOG_FORMAT: 'json' | 'pretty' }): Logger {
  if (config.LOG_FORMAT === 'json') return createLogger(config.LOG_LEVEL);
  // Loaded here: a process logging JSON (every one but `npm start`'s) skips its 29 modules.
  const pinoPretty = require('pino-pretty') as typeof import('pino-pretty');
  return createLogger(config.LOG_LEVEL, pinoPretty({ sync: true, singleLine: true, translateTime: 'SYS:HH:MM:ss', ignore: 'pid,hostname' }));
}
