import { isSpanContextValid, trace, type Context, type SpanContext } from '@opentelemetry/api';

/**
 * A W3C traceparent (trace-context level 1, section 3.2): version, trace id,
 * parent id and flags in lower-case hex. A later version may append fields
 * after another dash, which a reader of version 00 ignores.
 */
const TRACEPARENT = /^([0-9a-f]{2})-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})(-.*)?$/;

/**
 * The span context a job's `traceparent` names, as a remote parent; or
 * undefined when it is absent or malformed (version ff, a version 00 with
 * extra fields, an all-zero id), which the W3C rules say to ignore. Parsed
 * here rather than by a registered propagator: the server's spans join the
 * job's trace whatever propagators the deployment configures.
 */
export function parseTraceparent(traceparent: string | undefined): SpanContext | undefined {
  const match = traceparent === undefined ? null : TRACEPARENT.exec(traceparent);
  if (match === null) return undefined;
  const [, version, traceId, spanId, flags, rest] = match;
  if (version === 'ff' || (version === '00' && rest !== undefined)) return undefined;
  const context: SpanContext = { traceId: traceId!, spanId: spanId!, traceFlags: Number.parseInt(flags!, 16), isRemote: true };
  return isSpanContextValid(context) ? context : undefined;
}

/** `base` with the job's trace context as the parent of the spans started in it; `base` itself when the job has none. */
export function withJobTrace(base: Context, traceparent: string | undefined): Context {
  const parent = parseTraceparent(traceparent);
  return parent === undefined ? base : trace.setSpanContext(base, parent);
}

/** A span context as a version 00 traceparent; undefined for an invalid one (a no-op tracer's without a parent). */
export function formatTraceparent(span: SpanContext): string | undefined {
  if (!isSpanContextValid(span)) return undefined;
  return `00-${span.traceId}-${span.spanId}-${span.traceFlags.toString(16).padStart(2, '0')}`;
}
