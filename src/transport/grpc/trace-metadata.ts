import type { CallContext } from 'nice-grpc';
import type { TraceContext } from '../../app/job-commands';

/** W3C trace context sent with the call (ojs-grpc-binding section 9.4). */
export function traceContextOf(context: CallContext): TraceContext {
  const trace: TraceContext = {};
  const traceparent = context.metadata.get('traceparent');
  const tracestate = context.metadata.get('tracestate');
  if (traceparent !== undefined) trace.traceparent = traceparent;
  if (tracestate !== undefined) trace.tracestate = tracestate;
  return trace;
}
