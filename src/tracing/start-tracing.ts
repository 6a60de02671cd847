import { ProxyTracerProvider, type Tracer } from '@opentelemetry/api';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { detectResources, envDetector, resourceFromAttributes } from '@opentelemetry/resources';
import { BasicTracerProvider, BatchSpanProcessor, type SpanExporter } from '@opentelemetry/sdk-trace-base';
import { ATTR_SERVICE_NAME } from '@opentelemetry/semantic-conventions';

/** A process's tracer, and what flushes its spans at the end. */
export interface Tracing {
  tracer: Tracer;
  /** False when no endpoint is configured: the tracer is a no-op and nothing is exported. */
  enabled: boolean;
  /** Exports the spans still buffered, then stops (a no-op when disabled). */
  shutdown(): Promise<void>;
}

export interface TracingOptions {
  /** OTEL_EXPORTER_OTLP_ENDPOINT: the OTLP/HTTP base URL; unset → tracing off. */
  endpoint: string | undefined;
  /** `service.name` of this process's spans, unless OTEL_SERVICE_NAME says otherwise. */
  serviceName: string;
  /** Makes the exporter for `<endpoint>/v1/traces`; tests count its calls. Default: OTLP/HTTP JSON. */
  createExporter?: (url: string) => SpanExporter;
}

const TRACER_NAME = 'switchyard';

/**
 * Starts the OpenTelemetry trace SDK when an endpoint is configured. Nothing is registered
 * globally: the tracer is handed down through the process's resources, so several stacks in
 * one test process each trace (or not) on their own. Without an endpoint no SDK, processor or
 * exporter exists, and the tracer's spans are the API's non-recording ones.
 */
export function startTracing(options: TracingOptions): Tracing {
  if (!options.endpoint) {
    // A provider with no delegate answers with the API's no-op tracer, whatever is registered globally.
    return { tracer: new ProxyTracerProvider().getTracer(TRACER_NAME), enabled: false, shutdown: async () => undefined };
  }
  const exporter = (options.createExporter ?? defaultExporter)(tracesUrl(options.endpoint));
  const provider = new BasicTracerProvider({
    // OTEL_SERVICE_NAME and OTEL_RESOURCE_ATTRIBUTES win over our default name.
    resource: resourceFromAttributes({ [ATTR_SERVICE_NAME]: options.serviceName }).merge(detectResources({ detectors: [envDetector] })),
    // Batched off the request path; OTEL_BSP_SCHEDULE_DELAY and the other OTEL_BSP_* variables apply.
    spanProcessors: [new BatchSpanProcessor(exporter)],
  });
  return {
    tracer: provider.getTracer(TRACER_NAME),
    enabled: true,
    shutdown: () => provider.shutdown(),
  };
}

/** The OTLP rule for a base endpoint: the signal's path is appended to whatever path it has. */
export function tracesUrl(endpoint: string): string {
  return `${endpoint.replace(/\/+$/, '')}/v1/traces`;
}

function defaultExporter(url: string): SpanExporter {
  return new OTLPTraceExporter({ url });
}
