import { mkdtemp, writeFile } from 'node:fs/promises';
import http, { type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { CallToolRequestSchema, ListToolsRequestSchema } from '@modelcontextprotocol/sdk/types.js';
import type { ToolExecution } from './invariants';

/**
 * Real servers for tool tests: an HTTP endpoint that records what it receives and can be told
 * to fail or hang, MCP servers (server-everything, a small scripted stdio server, a streamable
 * HTTP one), and temporary tools directories.
 */

export interface RecordedRequest {
  method: string;
  path: string;
  query: Record<string, string>;
  headers: IncomingHttpHeaders;
  bodyText: string;
  /** The body as JSON when it parses, else the text. */
  body: unknown;
  /** `Date.now()` when the request had arrived in full. */
  receivedAt: number;
  /** `Date.now()` when the reply was sent; unset while it is held or hangs. */
  answeredAt?: number;
  /** `Date.now()` when the client went away before the reply (it gave up, or was cancelled). */
  abortedAt?: number;
}

/**
 * A reply: `body` objects are sent as JSON, strings as text/plain (unless `contentType` says
 * otherwise); `delayMs` holds the request that long before answering (a tool that takes time),
 * `until` until that promise settles (a tool that runs until the test has seen what it waits for).
 */
export type ToolServerReply =
  { status?: number; body?: unknown; contentType?: string; headers?: Record<string, string>; delayMs?: number; until?: Promise<unknown> } | { hang: true };

export interface ToolHttpServer {
  /** Base URL, e.g. `http://127.0.0.1:41234`. */
  url: string;
  /** Every request, in arrival order. */
  requests: RecordedRequest[];
  /** The requests (to `path`, or any) as the tool executions they are, for checkInvariants. */
  executions(path?: string): ToolExecution[];
  /** The reply for a path (default for every path: 200 with `{method, path, query, body}` as JSON). */
  route(path: string, reply: ToolServerReply | ((request: RecordedRequest) => ToolServerReply)): void;
  /** The next `count` requests (any path) get `reply`, default a 500 with the text `boom`. */
  failNext(count: number, reply?: ToolServerReply): void;
  /** The next `count` requests (any path) are never answered (until `close`). */
  hangNext(count: number): void;
  /** Resolves once `count` requests in all have arrived; rejects after `timeoutMs` (default 10000). */
  waitForRequests(count: number, timeoutMs?: number): Promise<RecordedRequest[]>;
  /** Resolves once the client has gone away from `request` before its reply; rejects after `timeoutMs` (default 10000). */
  waitForAbort(request: RecordedRequest, timeoutMs?: number): Promise<void>;
  close(): Promise<void>;
}

export async function startToolHttpServer(): Promise<ToolHttpServer> {
  const requests: RecordedRequest[] = [];
  const routes = new Map<string, ToolServerReply | ((request: RecordedRequest) => ToolServerReply)>();
  const overrides: ToolServerReply[] = [];
  const waiters: { count: number; resolve: () => void }[] = [];
  const abortWaiters = new Map<RecordedRequest, (() => void)[]>();

  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const url = new URL(req.url ?? '/', 'http://localhost');
      const bodyText = Buffer.concat(chunks).toString('utf8');
      const request: RecordedRequest = {
        method: req.method ?? '',
        path: url.pathname,
        query: Object.fromEntries(url.searchParams),
        headers: req.headers,
        bodyText,
        body: parseOrText(bodyText),
        receivedAt: Date.now(),
      };
      requests.push(request);
      for (const waiter of waiters.filter((each) => requests.length >= each.count)) waiter.resolve();
      res.on('close', () => {
        if (request.answeredAt) return;
        request.abortedAt = Date.now();
        for (const resolve of abortWaiters.get(request) ?? []) resolve();
      });

      const route = routes.get(request.path);
      const reply: ToolServerReply = overrides.shift() ??
        (typeof route === 'function' ? route(request) : route) ?? { body: { method: request.method, path: request.path, query: request.query, body: request.body } };
      if ('hang' in reply) return;
      const isText = typeof reply.body === 'string';
      const payload = reply.body === undefined ? '' : isText ? (reply.body as string) : JSON.stringify(reply.body);
      const answer = () => {
        if (res.destroyed) return;
        request.answeredAt = Date.now();
        res.writeHead(reply.status ?? 200, {
          'content-type': reply.contentType ?? (isText ? 'text/plain; charset=utf-8' : 'application/json'),
          ...reply.headers,
        });
        res.end(payload);
      };
      if (reply.until) {
        void reply.until.finally(answer);
      } else if (reply.delayMs) {
        const timer = setTimeout(answer, reply.delayMs);
        res.on('close', () => clearTimeout(timer));
      } else {
        answer();
      }
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;

  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    executions: (only) =>
      requests
        .filter((request) => only === undefined || request.path === only)
        .map((request) => ({ idempotencyKey: String(request.headers['idempotency-key']), at: request.receivedAt })),
    route: (routePath, reply) => void routes.set(routePath, reply),
    failNext: (count, reply = { status: 500, body: 'boom' }) => {
      for (let i = 0; i < count; i++) overrides.push(reply);
    },
    hangNext: (count) => {
      for (let i = 0; i < count; i++) overrides.push({ hang: true });
    },
    waitForRequests: (count, timeoutMs = 10_000) =>
      new Promise((resolve, reject) => {
        if (requests.length >= count) return resolve(requests.slice());
        const timer = setTimeout(() => reject(new Error(`expected ${count} requests, got ${requests.length}`)), timeoutMs);
        waiters.push({
          count,
          resolve: () => {
            clearTimeout(timer);
            resolve(requests.slice());
          },
        });
      }),
    waitForAbort: (request, timeoutMs = 10_000) =>
      new Promise((resolve, reject) => {
        if (request.abortedAt) return resolve();
        const timer = setTimeout(() => reject(new Error(`the client did not go away from ${request.method} ${request.path}`)), timeoutMs);
        abortWaiters.set(request, [
          ...(abortWaiters.get(request) ?? []),
          () => {
            clearTimeout(timer);
            resolve();
          },
        ]);
      }),
    close: () =>
      new Promise<void>((resolve) => {
        // Hanging requests hold their sockets open; close() alone would wait for them forever.
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

function parseOrText(text: string): unknown {
  if (text === '') return undefined;
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}

/** A temporary tools directory holding the given files (objects are written as JSON). */
export async function writeToolsDir(files: Record<string, unknown>): Promise<string> {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'switchyard-tools-'));
  for (const [name, content] of Object.entries(files)) {
    await writeFile(path.join(dir, name), typeof content === 'string' ? content : JSON.stringify(content, null, 2));
  }
  return dir;
}

/**
 * A tools-file entry for the http tool `name`, served at `${serverUrl}/${name}` and taking one
 * integer argument, `field`.
 */
export function httpToolEntry(serverUrl: string, name: string, settings: { timeoutMs: number; retries: number }, field = 'n') {
  return {
    name,
    description: `${name} tool`,
    url: `${serverUrl}/${name}`,
    inputSchema: { type: 'object', properties: { [field]: { type: 'integer' } } },
    ...settings,
  };
}

/** The mcp.json entry for @modelcontextprotocol/server-everything over stdio. */
export function everythingServerEntry(env: Record<string, string> = {}): { command: string; args: string[]; env: Record<string, string> } {
  const entry = require.resolve('@modelcontextprotocol/server-everything/dist/index.js');
  return { command: process.execPath, args: [entry, 'stdio'], env };
}

/**
 * The mcp.json entry for a small scripted stdio MCP server with the tools the registry's edge
 * cases need: `echo` (a draft-07 schema, answers `{text, pid}`), `env` (its environment), `fail`
 * (`isError: true`), `crash` (exits without answering), `sleep` (never answers) and `bad.name`
 * (a name the registry must skip).
 */
export function scriptedMcpServerEntry(env: Record<string, string> = {}): { command: string; args: string[]; env: Record<string, string> } {
  const sdk = (module: string) => JSON.stringify(require.resolve(`@modelcontextprotocol/sdk/${module}`));
  const script = `
    const { Server } = require(${sdk('server/index.js')});
    const { StdioServerTransport } = require(${sdk('server/stdio.js')});
    const { ListToolsRequestSchema, CallToolRequestSchema } = require(${sdk('types.js')});
    const server = new Server({ name: 'scripted', version: '1.0.0' }, { capabilities: { tools: {} } });
    const empty = { type: 'object', properties: {} };
    server.setRequestHandler(ListToolsRequestSchema, async () => ({ tools: [
      { name: 'echo', description: 'Echoes text', inputSchema: { $schema: 'http://json-schema.org/draft-07/schema#', type: 'object',
        properties: { text: { type: 'string' } }, required: ['text'], additionalProperties: false } },
      { name: 'env', description: 'Returns its environment', inputSchema: empty },
      { name: 'fail', description: 'Always fails', inputSchema: empty },
      { name: 'crash', description: 'Exits', inputSchema: empty },
      { name: 'sleep', description: 'Never answers', inputSchema: empty },
      { name: 'bad.name', description: 'Not a valid tool name', inputSchema: empty },
    ] }));
    server.setRequestHandler(CallToolRequestSchema, async (request) => {
      const text = (value) => ({ content: [{ type: 'text', text: typeof value === 'string' ? value : JSON.stringify(value) }] });
      switch (request.params.name) {
        case 'echo': return text({ text: request.params.arguments.text, pid: process.pid });
        case 'env': return text(process.env);
        case 'fail': return { ...text('the scripted tool failed'), isError: true };
        case 'crash': process.exit(3);
        case 'sleep': return new Promise(() => {});
        default: return { ...text('unknown tool'), isError: true };
      }
    });
    server.connect(new StdioServerTransport());
  `;
  return { command: process.execPath, args: ['-e', script], env };
}

export interface McpHttpServer {
  /** The MCP endpoint, e.g. `http://127.0.0.1:41234/mcp`. */
  url: string;
  /** The headers of every request, to check what the client sent. */
  headers: IncomingHttpHeaders[];
  /** Every `tools/call` it answered, in order. */
  calls: { name: string; arguments: unknown }[];
  close(): Promise<void>;
}

/** A stateless streamable HTTP MCP server with one tool, `add` ({a, b} → a + b). */
export async function startMcpHttpServer(): Promise<McpHttpServer> {
  const headers: IncomingHttpHeaders[] = [];
  const calls: { name: string; arguments: unknown }[] = [];
  const serve = async (req: http.IncomingMessage, res: http.ServerResponse) => {
    headers.push(req.headers);
    // Stateless: a fresh server and transport per request, as the SDK's stateless example does.
    const mcp = new Server({ name: 'http-test', version: '1.0.0' }, { capabilities: { tools: {} } });
    mcp.setRequestHandler(ListToolsRequestSchema, async () => ({
      tools: [
        {
          name: 'add',
          description: 'Adds two numbers',
          inputSchema: { type: 'object', properties: { a: { type: 'number' }, b: { type: 'number' } }, required: ['a', 'b'] },
        },
      ],
    }));
    mcp.setRequestHandler(CallToolRequestSchema, async (request) => {
      calls.push({ name: request.params.name, arguments: request.params.arguments });
      const { a, b } = request.params.arguments as { a: number; b: number };
      return { content: [{ type: 'text', text: String(a + b) }] };
    });
    const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined });
    res.on('close', () => {
      void transport.close();
      void mcp.close();
    });
    await mcp.connect(transport);
    await transport.handleRequest(req, res);
  };
  // A request the SDK fails to handle ends its connection, as a crashed server's would.
  const server = http.createServer((req, res) => void serve(req, res).catch((error: unknown) => res.destroy(error instanceof Error ? error : new Error(String(error)))));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/mcp`,
    headers,
    calls,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
