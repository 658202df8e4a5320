import type { TraceContext } from '../../app/job-commands';
import type { RequestMetadata } from './request-metadata';

/** W3C trace context sent with the call (ojs-grpc-binding section 9.4). */
export function traceContextOf(metadata: RequestMetadata): TraceContext {
  const trace: TraceContext = {};
  const traceparent = metadata.text('traceparent');
  const tracestate = metadata.text('tracestate');
  if (traceparent !== undefined) trace.traceparent = traceparent;
  if (tracestate !== undefined) trace.tracestate = tracestate;
  return trace;
}
