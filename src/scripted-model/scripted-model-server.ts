import { once } from 'node:events';
import http from 'node:http';
import { text } from 'node:stream/consumers';
import type { AddressInfo } from 'node:net';
import { errorMessage } from '../errors/switchyard-error';
import { ArrivalCounter } from './arrival-counter';
import { handleChatCompletions } from './chat-completions-handler';
import { sendError, sendJson } from './http-responses';
import { RequestLog, type RecordedRequest } from './request-log';
import { FaultControl, parseFault, type Fault } from './fault-control';
import { invalidRequest } from './openai-error';

export type { RecordedRequest } from './request-log';
export type { Fault } from './fault-control';

export interface ScriptedModel {
  /** Base URL for an OpenAI client, INCLUDING `/v1`, e.g. `http://127.0.0.1:41234/v1`. */
  url: string;
  port: number;
  /** Every chat-completion request received, oldest first (bounded: the oldest are dropped past `maxRecordedRequests`). */
  requests: RecordedRequest[];
  /** Resolves with the first recorded request (past or future) matching `predicate`; rejects after timeoutMs (default 10000). */
  waitForRequest(predicate: (request: RecordedRequest) => boolean, timeoutMs?: number): Promise<RecordedRequest>;
  /**
   * Sets the fault every request gets from now on (null clears it), whatever its scenario says
   * (fault-control.ts); the same as `PUT /v1/scripted/fault`. Throws on a fault that is not one.
   */
  setFault(fault: Fault | null): void;
  /** Ends open streams and closes every connection at once. */
  close(): Promise<void>;
}

export interface ScriptedModelOptions {
  /** Default 0: a free port. */
  port?: number;
  /** Default `127.0.0.1`. */
  host?: string;
  /** Requests kept in `requests`. Default 1000. */
  maxRecordedRequests?: number;
  /** Pause per token of answers made without a scenario, so that a person sees them stream. Default 15. */
  defaultTokenDelayMs?: number;
  /** A fault set from the start (see {@link ScriptedModel.setFault}). */
  fault?: Fault;
}

const MODEL_ID = 'scripted';
/** `GET` the fault set now, `PUT` one (its JSON the body), `DELETE` it. */
export const FAULT_PATH = '/v1/scripted/fault';

/**
 * Starts the scripted model: an OpenAI-compatible chat-completions server whose answers a
 * request scripts with a scenario (see scenario-schema.ts). It is Switchyard's default model,
 * the fake provider of its tests and the baseline of its benchmarks.
 */
export async function startScriptedModel(options: ScriptedModelOptions = {}): Promise<ScriptedModel> {
  const log = new RequestLog(options.maxRecordedRequests ?? 1000);
  const faults = new FaultControl();
  faults.set(options.fault ?? null);
  const context = { log, arrivals: new ArrivalCounter(), defaultTokenDelayMs: options.defaultTokenDelayMs ?? 15, faults };
  const startedAt = Math.floor(Date.now() / 1000);

  // Nagle off so each token leaves at once; long keep-alive so benchmark clients reuse connections.
  const server = http.createServer({ noDelay: true, keepAlive: true, keepAliveTimeout: 65_000 }, (req, res) => {
    route(req, res).catch((error: unknown) => {
      if (res.headersSent) return res.destroy();
      // No logger here: the message goes to the client, which is the test that hit the bug.
      const message = `The scripted model failed: ${errorMessage(error)}`;
      sendError(res, { status: 500, message, type: 'server_error', param: null, code: null });
    });
  });

  async function route(req: http.IncomingMessage, res: http.ServerResponse): Promise<void> {
    const path = new URL(req.url ?? '/', 'http://scripted.invalid').pathname;
    if (req.method === 'POST' && path === '/v1/chat/completions') return handleChatCompletions(req, res, context);
    if (path === FAULT_PATH) return routeFault(req, res, faults);
    if (req.method === 'GET' && path === '/v1/models') {
      return sendJson(res, 200, { object: 'list', data: [{ id: MODEL_ID, object: 'model', created: startedAt, owned_by: 'switchyard' }] });
    }
    sendError(res, { status: 404, message: `Invalid URL (${req.method} ${path})`, type: 'invalid_request_error', param: null, code: null });
  }

  server.listen(options.port ?? 0, options.host ?? '127.0.0.1');
  await once(server, 'listening');
  const { address, port } = server.address() as AddressInfo;
  const host = address.includes(':') ? `[${address}]` : address;

  let closing: Promise<void> | undefined;
  return {
    url: `http://${host}:${port}/v1`,
    port,
    requests: log.requests,
    waitForRequest: (predicate, timeoutMs = 10_000) => log.waitFor(predicate, timeoutMs),
    setFault(fault) {
      if (fault === null) return faults.set(null);
      const parsed = parseFault(fault);
      if (!parsed.ok) throw new Error(`not a fault: ${parsed.message}`);
      faults.set(parsed.fault);
    },
    close() {
      closing ??= new Promise<void>((resolve) => {
        log.close();
        server.close(() => resolve());
        // Open streams (stalled ones included) would keep close() waiting: end them now.
        server.closeAllConnections();
      });
      return closing;
    },
  };
}

async function routeFault(req: http.IncomingMessage, res: http.ServerResponse, faults: FaultControl): Promise<void> {
  if (req.method === 'DELETE') faults.set(null);
  else if (req.method === 'PUT') {
    let body: unknown;
    try {
      body = JSON.parse(await text(req));
    } catch {
      return sendError(res, invalidRequest('The fault is not valid JSON.'));
    }
    const parsed = parseFault(body);
    if (!parsed.ok) return sendError(res, invalidRequest(`Not a fault: ${parsed.message}`));
    faults.set(parsed.fault);
  } else if (req.method !== 'GET') {
    return sendError(res, { status: 405, message: `${req.method} ${FAULT_PATH}: GET, PUT or DELETE`, type: 'invalid_request_error', param: null, code: null });
  }
  sendJson(res, 200, { fault: faults.current });
}
