import { existsSync } from 'node:fs';
import path from 'node:path';
import express, { type RequestHandler } from 'express';

const NOT_BUILT = `<!doctype html><meta charset="utf-8"><title>Switchyard</title>
<p>The playground is not built here. <code>npm start</code> builds it; with the processes run apart, run <code>npm run build:playground</code>.</p>`;

/** A railway switch: one track parting in two. Inline, so that it answers whether or not the bundle is built. */
const FAVICON_SVG = `<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 32 32"><rect width="32" height="32" rx="7" fill="#1d2330"/><path d="M11 27V5M11 19c0-6 10-6 10-12M21 27v-5" stroke="#8ea6ff" stroke-width="3.5" fill="none" stroke-linecap="round"/></svg>`;
/** Browsers ask for `/favicon.ico` unasked; the page links the SVG by name. */
const FAVICON_PATHS = new Set(['/favicon.ico', '/favicon.svg']);

/** The playground's bundle at `/` (index.html, app.js, app.css), as `npm run build:playground` wrote it to `dir`, and its icon. */
export function servePlayground(dir: string): RequestHandler {
  const files = express.static(dir, { index: 'index.html', fallthrough: true, maxAge: 0 });
  return (req, res, next) => {
    if ((req.method === 'GET' || req.method === 'HEAD') && FAVICON_PATHS.has(req.path))
      return void res.type('image/svg+xml').set('cache-control', 'public, max-age=86400').send(FAVICON_SVG);
    if (req.method === 'GET' && req.path === '/' && !existsSync(path.join(dir, 'index.html'))) return void res.type('html').send(NOT_BUILT);
    files(req, res, next);
  };
}
