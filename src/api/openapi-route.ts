import fs from 'node:fs';
import path from 'node:path';
import cors from 'cors';
import type { RequestHandler } from 'express';
import { projectRoot } from '../config/project-root';
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
      document ??= JSON.stringify(buildOpenApiDocument(projectVersion(), families));
      res.type('json').send(document);
    },
  ];
}

/** package.json's version, read from the project's root (the compiled server in dist/ has no copy of it). */
function projectVersion(): string {
  return (JSON.parse(fs.readFileSync(path.join(projectRoot(__dirname), 'package.json'), 'utf8')) as { version: string }).version;
}
