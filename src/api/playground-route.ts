import { existsSync } from 'node:fs';
import path from 'node:path';
import express, { type RequestHandler } from 'express';

const NOT_BUILT = `<!doctype html><meta charset="utf-8"><title>Switchyard</title>
<p>The playground is not built here. <code>npm start</code> builds it; with the processes run apart, run <code>npm run build:playground</code>.</p>`;

/** The playground's bundle at `/` (index.html, app.js, app.css), as `npm run build:playground` wrote it to `dir`. */
export function servePlayground(dir: string): RequestHandler {
  const files = express.static(dir, { index: 'index.html', fallthrough: true, maxAge: 0 });
  return (req, res, next) => {
    if (req.method === 'GET' && req.path === '/' && !existsSync(path.join(dir, 'index.html'))) return void res.type('html').send(NOT_BUILT);
    files(req, res, next);
  };
}
