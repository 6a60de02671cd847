import type { Tracer } from '@opentelemetry/api';
import type { SpanExporter } from '@opentelemetry/sdk-trace-base';

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
