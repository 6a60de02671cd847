import { ProxyTracerProvider } from '@opentelemetry/api';
import type { Tracing, TracingOptions } from './tracing-types';

export type { Tracing, TracingOptions } from './tracing-types';

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
  // The SDK and its exporter are loaded only where tracing is on: loading them costs every
  // process, and every test file that starts a stack, a tenth of a second of CPU for nothing.
  const { startSdkTracing } = require('./sdk-tracing') as typeof import('./sdk-tracing');
  return startSdkTracing(options, tracesUrl(options.endpoint), TRACER_NAME);
}

/** The OTLP rule for a base endpoint: the signal's path is appended to whatever path it has. */
export function tracesUrl(endpoint: string): string {
  return `${endpoint.replace(/\/+$/, '')}/v1/traces`;
}
