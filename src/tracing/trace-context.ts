import { isSpanContextValid, ROOT_CONTEXT, trace, type Context, type Span } from '@opentelemetry/api';
import type { W3CTraceContextPropagator } from '@opentelemetry/core';
import { z } from 'zod';

/**
 * The propagator, with @opentelemetry/core, made when a trace first crosses a job: with tracing
 * off (no OTEL_EXPORTER_OTLP_ENDPOINT) no span has a context to pass on and no job carries a
 * `traceparent`, so the process never loads it.
 */
let w3c: W3CTraceContextPropagator | undefined;
const propagator = () => (w3c ??= new (require('@opentelemetry/core') as typeof import('@opentelemetry/core')).W3CTraceContextPropagator());

const carrierGetter = {
  get: (carrier: Record<string, string>, key: string) => carrier[key],
  keys: (carrier: Record<string, string>) => Object.keys(carrier),
};
const carrierSetter = { set: (carrier: Record<string, string>, key: string, value: string) => (carrier[key] = value) };

/**
 * A W3C `traceparent` as it travels in job data and the turn row. Bounded so that a forged
 * value in a job cannot grow the payload; one the propagator cannot read starts a new trace.
 */
export const traceparentSchema = z.string().max(128);

/**
 * The W3C `traceparent` naming `span` as the parent of what a job does on another process (also
 * once the span has ended); undefined for the no-op tracer's spans (tracing off), so job data
 * stays as it was.
 */
export function traceparentOf(span: Span): string | undefined {
  // What the propagator checks first, without loading it for the no-op tracer's spans.
  if (!isSpanContextValid(span.spanContext())) return undefined;
  const carrier: Record<string, string> = {};
  propagator().inject(trace.setSpan(ROOT_CONTEXT, span), carrier, carrierSetter);
  return carrier.traceparent;
}

/** The context whose (remote) span is the one `traceparent` names; the root context without one. */
export function contextFrom(traceparent: string | null | undefined): Context {
  if (!traceparent) return ROOT_CONTEXT;
  return propagator().extract(ROOT_CONTEXT, { traceparent }, carrierGetter);
}

/** The context whose parent span is `span`: what child spans are started under. */
export function contextOf(span: Span): Context {
  return trace.setSpan(ROOT_CONTEXT, span);
}
