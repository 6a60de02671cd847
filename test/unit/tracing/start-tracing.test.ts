import { trace } from '@opentelemetry/api';
import { ExportResultCode } from '@opentelemetry/core';
import { InMemorySpanExporter, type ReadableSpan, type SpanExporter } from '@opentelemetry/sdk-trace-base';
import { startTracing, tracesUrl } from '../../../src/tracing/start-tracing';
import { contextFrom, contextOf, traceparentOf } from '../../../src/tracing/trace-context';

describe('startTracing', () => {
  it('creates no exporter without an endpoint, and its spans record nothing and propagate nothing', async () => {
    const createExporter = jest.fn(() => new InMemorySpanExporter());
    const tracing = startTracing({ endpoint: undefined, serviceName: 'test', createExporter });
    expect(tracing.enabled).toBe(false);
    const span = tracing.tracer.startSpan('anything');
    span.setAttribute('key', 'value');
    span.end();
    expect(span.isRecording()).toBe(false);
    expect(traceparentOf(span)).toBeUndefined();
    await tracing.shutdown();
    expect(createExporter).not.toHaveBeenCalled();
  });

  it('exports to <endpoint>/v1/traces when an endpoint is set, with the service name on the resource', async () => {
    const exported: ReadableSpan[] = [];
    const exporter: SpanExporter = {
      export: (spans, done) => {
        exported.push(...spans);
        done({ code: ExportResultCode.SUCCESS });
      },
      shutdown: async () => undefined,
    };
    const createExporter = jest.fn(() => exporter);
    const tracing = startTracing({ endpoint: 'http://collector:4318', serviceName: 'switchyard-test', createExporter });
    expect(tracing.enabled).toBe(true);
    expect(createExporter).toHaveBeenCalledWith('http://collector:4318/v1/traces');
    tracing.tracer.startSpan('one').end();
    // Shutdown flushes the batch: the spans of a stopping process are not lost.
    await tracing.shutdown();
    const [span] = exported;
    expect(span?.name).toBe('one');
    expect(span?.resource.attributes['service.name']).toBe('switchyard-test');
  });

  it('carries a span across a process boundary as a W3C traceparent, also after the span ended', async () => {
    const exporter = new InMemorySpanExporter();
    const tracing = startTracing({ endpoint: 'http://collector:4318', serviceName: 'test', createExporter: () => exporter });
    const parent = tracing.tracer.startSpan('parent');
    parent.end();
    const traceparent = traceparentOf(parent);
    expect(traceparent).toMatch(/^00-[0-9a-f]{32}-[0-9a-f]{16}-01$/);
    const child = tracing.tracer.startSpan('child', {}, contextFrom(traceparent));
    const grandchild = tracing.tracer.startSpan('grandchild', {}, contextOf(child));
    expect(child.spanContext().traceId).toBe(parent.spanContext().traceId);
    expect(trace.getSpanContext(contextFrom(traceparent))?.spanId).toBe(parent.spanContext().spanId);
    expect(grandchild.spanContext().traceId).toBe(parent.spanContext().traceId);
    // No traceparent (or one that cannot be read) starts a new trace.
    for (const missing of [undefined, null, 'garbage']) {
      expect(tracing.tracer.startSpan('root', {}, contextFrom(missing)).spanContext().traceId).not.toBe(parent.spanContext().traceId);
    }
    await tracing.shutdown();
  });
});

describe('tracesUrl', () => {
  it('appends the signal path to the base endpoint, keeping its own path', () => {
    expect(tracesUrl('http://collector:4318')).toBe('http://collector:4318/v1/traces');
    expect(tracesUrl('http://collector:4318/')).toBe('http://collector:4318/v1/traces');
    expect(tracesUrl('https://vendor.example/otlp')).toBe('https://vendor.example/otlp/v1/traces');
  });
});
