import cors from 'cors';
import type { RequestHandler } from 'express';
import packageJson from '../../package.json';
import { buildOpenApiDocument } from './contract/openapi-document';

/**
 * `GET /openapi.json`: public documentation, so without credentials and readable from any origin
 * (an API explorer on another site). Built on the first request, then kept: the document only
 * changes with the code.
 */
export function serveOpenApiDocument(): RequestHandler[] {
  let document: string | undefined;
  return [
    cors(),
    (_req, res) => {
      document ??= JSON.stringify(buildOpenApiDocument(packageJson.version));
      res.type('json').send(document);
    },
  ];
}
