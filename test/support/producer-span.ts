import { SpanKind, type SpanContext } from '@opentelemetry/api';
import { BasicTracerProvider } from '@opentelemetry/sdk-trace-base';

/**
 * A producer's span, made by a tracer of its own as a producer service's
 * would be, and the W3C traceparent that carries it to the server.
 */
export function producerSpan(): { context: SpanContext; traceparent: string } {
  const span = new BasicTracerProvider().getTracer('producer').startSpan('orders enqueue', { kind: SpanKind.PRODUCER });
  span.end();
  const context = span.spanContext();
  return { context, traceparent: `00-${context.traceId}-${context.spanId}-01` };
}
