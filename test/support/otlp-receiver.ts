import http from 'node:http';
import type { AddressInfo } from 'node:net';
import zlib from 'node:zlib';

/** A span as an OTLP/HTTP JSON export carried it, with its attributes decoded to plain values. */
export interface ReceivedSpan {
  service: string;
  traceId: string;
  spanId: string;
  parentSpanId: string | undefined;
  name: string;
  /** OTLP's numbers: 1 internal, 2 server, 3 client, 4 producer, 5 consumer. */
  kind: number;
  attributes: Record<string, unknown>;
  /** Its span events, in order. */
  events: { name: string; attributes: Record<string, unknown> }[];
  /** 0 unset, 1 ok, 2 error. */
  statusCode: number;
}

export interface OtlpReceiver {
  /** The base URL to give as OTEL_EXPORTER_OTLP_ENDPOINT. */
  url: string;
  spans: ReceivedSpan[];
  /** Resolves once `predicate` holds for the spans received so far (checked on every export). */
  waitFor(predicate: (spans: ReceivedSpan[]) => boolean, timeoutMs?: number): Promise<ReceivedSpan[]>;
  close(): Promise<void>;
}

/**
 * An OTLP/HTTP receiver on loopback for traces in the JSON encoding (what
 * @opentelemetry/exporter-trace-otlp-http sends): a collector's `/v1/traces`, in a test.
 */
export async function startOtlpReceiver(): Promise<OtlpReceiver> {
  const spans: ReceivedSpan[] = [];
  let waiters: { predicate: (spans: ReceivedSpan[]) => boolean; resolve: () => void }[] = [];
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      if (req.method !== 'POST' || req.url !== '/v1/traces' || !String(req.headers['content-type']).startsWith('application/json')) {
        res.writeHead(404).end();
        return;
      }
      const raw = Buffer.concat(chunks);
      const body = req.headers['content-encoding'] === 'gzip' ? zlib.gunzipSync(raw) : raw;
      spans.push(...decodeExport(JSON.parse(body.toString('utf8'))));
      res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
      waiters = waiters.filter((waiter) => {
        if (!waiter.predicate(spans)) return true;
        waiter.resolve();
        return false;
      });
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    spans,
    waitFor(predicate, timeoutMs = 20_000) {
      if (predicate(spans)) return Promise.resolve(spans);
      return new Promise((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error(`no matching spans within ${timeoutMs} ms; got: ${spans.map((s) => s.name).join(', ')}`)), timeoutMs);
        waiters.push({
          predicate,
          resolve: () => {
            clearTimeout(timer);
            resolve(spans);
          },
        });
      });
    },
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}

interface OtlpAnyValue {
  stringValue?: string;
  intValue?: number | string;
  doubleValue?: number;
  boolValue?: boolean;
  arrayValue?: { values?: OtlpAnyValue[] };
}
interface OtlpKeyValue {
  key: string;
  value: OtlpAnyValue;
}

function decodeExport(request: {
  resourceSpans?: {
    resource?: { attributes?: OtlpKeyValue[] };
    scopeSpans?: {
      spans?: {
        traceId: string;
        spanId: string;
        parentSpanId?: string;
        name: string;
        kind: number;
        attributes?: OtlpKeyValue[];
        status?: { code?: number };
        events?: { name: string; attributes?: OtlpKeyValue[] }[];
      }[];
    }[];
  }[];
}): ReceivedSpan[] {
  const received: ReceivedSpan[] = [];
  for (const resourceSpans of request.resourceSpans ?? []) {
    const resource = decodeAttributes(resourceSpans.resource?.attributes);
    for (const scope of resourceSpans.scopeSpans ?? []) {
      for (const span of scope.spans ?? []) {
        received.push({
          service: String(resource['service.name']),
          traceId: span.traceId,
          spanId: span.spanId,
          parentSpanId: span.parentSpanId || undefined,
          name: span.name,
          kind: span.kind,
          attributes: decodeAttributes(span.attributes),
          events: (span.events ?? []).map((event) => ({ name: event.name, attributes: decodeAttributes(event.attributes) })),
          statusCode: span.status?.code ?? 0,
        });
      }
    }
  }
  return received;
}

function decodeAttributes(attributes: OtlpKeyValue[] | undefined): Record<string, unknown> {
  return Object.fromEntries((attributes ?? []).map((attribute) => [attribute.key, decodeValue(attribute.value)]));
}

function decodeValue(value: OtlpAnyValue): unknown {
  if (value.stringValue !== undefined) return value.stringValue;
  // OTLP/JSON may write 64-bit integers as strings.
  if (value.intValue !== undefined) return Number(value.intValue);
  if (value.doubleValue !== undefined) return value.doubleValue;
  if (value.boolValue !== undefined) return value.boolValue;
  if (value.arrayValue !== undefined) return (value.arrayValue.values ?? []).map(decodeValue);
  return undefined;
}
