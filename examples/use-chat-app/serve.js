// The page's own server: it bundles the app, serves it on its own origin, and mints a short-lived
// session token for the page with the API key it keeps (a browser never holds an API key).
import http from 'node:http';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';

const here = path.dirname(fileURLToPath(import.meta.url));
const api = process.env.SWITCHYARD_URL ?? 'http://127.0.0.1:3000';
const apiKey = process.env.SWITCHYARD_API_KEY;
if (!apiKey) throw new Error('set SWITCHYARD_API_KEY (npm start prints one)');

const bundle = await build({
  entryPoints: [path.join(here, 'main.tsx')],
  bundle: true,
  write: false,
  format: 'esm',
  jsx: 'automatic',
  target: 'es2022',
  define: { 'process.env.NODE_ENV': '"production"' },
  logLevel: 'warning',
});
const page = '<!doctype html><meta charset="utf-8"><title>useChat on Switchyard</title><div id="root"></div><script type="module" src="/app.js"></script>';

const server = http.createServer(async (req, res) => {
  const { pathname } = new URL(req.url ?? '/', 'http://page');
  if (pathname === '/') return void res.writeHead(200, { 'content-type': 'text/html' }).end(page);
  if (pathname === '/favicon.ico') return void res.writeHead(204).end();
  if (pathname === '/app.js') return void res.writeHead(200, { 'content-type': 'text/javascript' }).end(bundle.outputFiles[0].contents);
  if (pathname === '/session') {
    // Here a real app checks its own login first; the token is for the user of SWITCHYARD_API_KEY.
    const minted = await fetch(`${api}/v1/session-tokens`, { method: 'POST', headers: { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json' }, body: '{}' });
    if (!minted.ok) return void res.writeHead(502).end(await minted.text());
    const { token } = await minted.json();
    return void res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ api, token }));
  }
  res.writeHead(404).end();
});
server.listen(Number(process.env.PORT ?? 5173), '127.0.0.1', () => console.log(`listening on http://127.0.0.1:${server.address().port}/`));
