import { context, createTraceState, trace, type SpanContext } from '@opentelemetry/api';

/**
 * A W3C traceparent: version, trace id, parent span id, flags, in lowercase
 * hex. A version after 00 may append fields, which are ignored
 * (W3C Trace Context, "Versioning of traceparent").
 */
const TRACEPARENT = /^([0-9a-f]{2})-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})(-.*)?$/;

/**
 * The remote span context a job's meta carries (`traceparent`, with its
 * `tracestate`), or undefined when it carries none or a malformed one.
 * Parsed here rather than through a registered propagator, so a job
 * continues its trace whatever the application registered.
 */
export function spanContextOf(meta: Readonly<Record<string, unknown>> | undefined): SpanContext | undefined {
  const traceparent = meta?.['traceparent'];
  if (typeof traceparent !== 'string') return undefined;
  const match = TRACEPARENT.exec(traceparent);
  if (match === null) return undefined;
  const [, version, traceId, spanId, flags, extension] = match;
  // Version ff is forbidden; version 00 has exactly four fields.
  if (version === 'ff' || (version === '00' && extension !== undefined)) return undefined;
  const spanContext: SpanContext = { traceId: traceId!, spanId: spanId!, traceFlags: Number.parseInt(flags!, 16), isRemote: true };
  // All-zero ids are invalid.
  if (!trace.isSpanContextValid(spanContext)) return undefined;
  const tracestate = meta?.['tracestate'];
  if (typeof tracestate === 'string' && tracestate !== '') spanContext.traceState = createTraceState(tracestate);
  return spanContext;
}

/**
 * The caller's active trace context as job meta fields (`traceparent`, and
 * `tracestate` when there is one), or undefined when no span is active
 * (ojs-distributed-tracing 6.1, injection).
 */
export function activeTraceMeta(): { traceparent: string; tracestate?: string } | undefined {
  const spanContext = trace.getSpanContext(context.active());
  if (spanContext === undefined || !trace.isSpanContextValid(spanContext)) return undefined;
  const flags = (spanContext.traceFlags & 0xff).toString(16).padStart(2, '0');
  const traceparent = `00-${spanContext.traceId}-${spanContext.spanId}-${flags}`;
  const tracestate = spanContext.traceState?.serialize();
  return tracestate === undefined || tracestate === '' ? { traceparent } : { traceparent, tracestate };
}
