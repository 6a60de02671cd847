import { SpanKind, type Span, type Tracer } from '@opentelemetry/api';
import { failSpan } from './fail-span';
import { chatRequestAttributes, chatResponseAttributes, spanNames } from './span-attributes';
import { contextOf } from './trace-context';

/**
 * One completion request of a step, as a GenAI `chat` span under the job's span. Started before
 * the request and ended once its stream has: nothing is recorded per chunk, so streaming tokens
 * costs no span work (and with tracing off every call here is the no-op tracer's).
 */
export function startChatSpan(tracer: Tracer, parent: Span, request: Parameters<typeof chatRequestAttributes>[0]): Span {
  return tracer.startSpan(spanNames.chat(request.model), { kind: SpanKind.CLIENT, attributes: chatRequestAttributes(request) }, contextOf(parent));
}

/** Ends a chat span with what the stream gave: usage, finish reason and model, or the error kind. */
export function endChatSpan(
  span: Span,
  result:
    | { ok: true; output: { finishReason: string; usage: { promptTokens: number; completionTokens: number }; responseModel?: string; responseId?: string } }
    | { ok: false; error: { kind: string } },
): void {
  if (result.ok) span.setAttributes(chatResponseAttributes(result.output));
  else failSpan(span, result.error.kind);
  span.end();
}
