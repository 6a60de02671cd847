import cors from 'cors';
import type { RequestHandler } from 'express';
import packageJson from '../../package.json';
import { buildOpenApiDocument } from './contract/openapi-document';
import type { RouteFamilyDocument } from './route-family';

/**
 * `GET /openapi.json`: public documentation, so without credentials and readable from any origin
 * (an API explorer on another site). Built from the route families' parts on the first request,
 * then kept: the document only changes with the code.
 */
export function serveOpenApiDocument(families: readonly RouteFamilyDocument[]): RequestHandler[] {
  let document: string | undefined;
  return [
    cors(),
    (_req, res) => {
      document ??= JSON.stringify(buildOpenApiDocument(packageJson.version, families));
      res.type('json').send(document);
    },
  ];
}
