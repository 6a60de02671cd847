import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { detectResources, envDetector, resourceFromAttributes } from '@opentelemetry/resources';
import { BasicTracerProvider, BatchSpanProcessor, type SpanExporter } from '@opentelemetry/sdk-trace-base';
import { ATTR_SERVICE_NAME } from '@opentelemetry/semantic-conventions';
import type { Tracing, TracingOptions } from './tracing-types';

/** The trace SDK of a process whose tracing is on (start-tracing.ts loads this only then). */
export function startSdkTracing(options: TracingOptions, url: string, tracerName: string): Tracing {
  const exporter = (options.createExporter ?? defaultExporter)(url);
  const provider = new BasicTracerProvider({
    // OTEL_SERVICE_NAME and OTEL_RESOURCE_ATTRIBUTES win over our default name.
    resource: resourceFromAttributes({ [ATTR_SERVICE_NAME]: options.serviceName }).merge(detectResources({ detectors: [envDetector] })),
    // Batched off the request path; OTEL_BSP_SCHEDULE_DELAY and the other OTEL_BSP_* variables apply.
    spanProcessors: [new BatchSpanProcessor(exporter)],
  });
  return {
    tracer: provider.getTracer(tracerName),
    enabled: true,
    shutdown: () => provider.shutdown(),
  };
}

function defaultExporter(url: string): SpanExporter {
  return new OTLPTraceExporter({ url });
}
