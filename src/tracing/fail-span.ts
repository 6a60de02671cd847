import { SpanStatusCode, type Span } from '@opentelemetry/api';
import { errorAttributes } from './span-attributes';

/**
 * Marks a span as ended in error, as the conventions' "Recording errors" asks: status ERROR and
 * `error.type`, a low-cardinality code. No message: a provider's or a tool's error text may
 * quote a key or a payload, and spans leave the service for a collector.
 */
export function failSpan(span: Span, errorType: string): void {
  span.setAttributes(errorAttributes(errorType));
  span.setStatus({ code: SpanStatusCode.ERROR });
}
