import type { Response } from 'express';
import type { z } from 'zod';

/**
 * Answers `body` as JSON, typed by the schema the document (GET /openapi.json) shows for this
 * answer: a route whose answer strays from its documented shape does not compile.
 */
export function sendJson<S extends z.core.$ZodType>(res: Response, _schema: S, body: z.output<S>, status = 200): void {
  res.status(status).json(body);
}
