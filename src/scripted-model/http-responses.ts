import type { ServerResponse } from 'node:http';
import { errorBody, type OpenAiError } from './openai-error';

export function sendJson(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  const text = JSON.stringify(body);
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text), ...headers });
  res.end(text);
}

/** An error status with OpenAI's body, and `Retry-After` when the error has one. */
export function sendError(res: ServerResponse, error: OpenAiError): void {
  const headers: Record<string, string> = {};
  if (error.retryAfterSeconds !== undefined) headers['retry-after'] = String(error.retryAfterSeconds);
  sendJson(res, error.status, errorBody(error), headers);
}
