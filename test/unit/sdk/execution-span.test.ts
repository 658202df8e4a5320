import { context, ROOT_CONTEXT, SpanKind, SpanStatusCode, trace, type SpanContext } from '@opentelemetry/api';
import { Job } from '../../../packages/sdk/gen/ojs/server/v1/job';
import { JobFailure, sdkJobError, toJobError } from '../../../packages/sdk/src/errors';
import { ExecutionSpan, SDK_TRACER } from '../../../packages/sdk/src/execution-span';
import { activeTraceMeta, spanContextOf } from '../../../packages/sdk/src/trace-context';
import { RecordedSpans } from '../../sdk/recorded-spans';

const TRACE_ID = '4bf92f3577b34da6a3ce929d0e0e4736';
const PARENT_ID = '00f067aa0ba902b7';
const TRACEPARENT = `00-${TRACE_ID}-${PARENT_ID}-01`;

const job = (meta?: Record<string, unknown>): Job =>
  Job.fromPartial({ id: '019539a4-b68c-7def-8000-1a2b3c4d5e6f', type: 'email.send', queue: 'email', attempt: 2, meta });

let spans: RecordedSpans;
beforeAll(() => {
  spans = RecordedSpans.register();
});
afterEach(() => spans.reset());
afterAll(() => spans.unregister());

describe("the span a job's handler runs in", () => {
  const tracer = () => trace.getTracer(SDK_TRACER);

  it("continues the job's trace as a CONSUMER span named after its type, with the job's attributes", async () => {
    const span = new ExecutionSpan(tracer(), job({ traceparent: TRACEPARENT, tracestate: 'vendor=1' }), 'worker-1');
    await span.run(async () => {
      await Promise.resolve(); // the span stays active across awaits
      trace.getTracer('app').startActiveSpan('app.work', (child) => child.end());
    });
    span.succeeded();
    const execute = spans.named('ojs.execute email.send');
    expect(execute.kind).toBe(SpanKind.CONSUMER);
    expect(execute.instrumentationScope.name).toBe('ojs-sdk');
    expect(execute.spanContext().traceId).toBe(TRACE_ID);
    expect(execute.parentSpanContext).toMatchObject({ traceId: TRACE_ID, spanId: PARENT_ID, isRemote: true });
    expect(execute.parentSpanContext?.traceState?.get('vendor')).toBe('1');
    expect(execute.attributes).toEqual({
      'messaging.system': 'ojs',
      'ojs.job.id': '019539a4-b68c-7def-8000-1a2b3c4d5e6f',
      'ojs.job.type': 'email.send',
      'ojs.job.queue': 'email',
      'ojs.job.attempt': 2,
      'ojs.worker.id': 'worker-1',
    });
    expect(execute.status).toEqual({ code: SpanStatusCode.OK });
    const child = spans.named('app.work');
    expect(child.spanContext().traceId).toBe(TRACE_ID);
    expect(child.parentSpanContext?.spanId).toBe(execute.spanContext().spanId);
  });

  it('starts a trace of its own for a job without trace context, whatever span is active around it', () => {
    trace.getTracer('app').startActiveSpan('app.fetching', (outer) => {
      new ExecutionSpan(tracer(), job(), 'worker-1').succeeded();
      outer.end();
    });
    const execute = spans.named('ojs.execute email.send');
    expect(execute.parentSpanContext).toBeUndefined();
    expect(execute.spanContext().traceId).not.toBe(spans.named('app.fetching').spanContext().traceId);
  });

  it('records a failure: the exception, the error attributes of the reported error, and an ERROR status', () => {
    const thrown = new JobFailure('card declined', { type: 'payment.declined' });
    new ExecutionSpan(tracer(), job({ traceparent: TRACEPARENT }), 'worker-1').failed(toJobError(thrown), 2, thrown);
    const execute = spans.named('ojs.execute email.send');
    expect(execute.status).toEqual({ code: SpanStatusCode.ERROR, message: 'card declined' });
    expect(execute.attributes).toMatchObject({
      'error.type': 'payment.declined',
      'error.message': 'card declined',
      'ojs.job.error.attempt': 2,
    });
    expect(
      execute.events.map((event) => [event.name, event.attributes?.['exception.type'], event.attributes?.['exception.message']]),
    ).toEqual([['exception', 'JobFailure', 'card declined']]);
    expect(String(execute.events[0]!.attributes?.['exception.stacktrace'])).toMatch(/JobFailure: card declined\n\s+at /);
  });

  it('records a failure the SDK reports itself (a timeout) without a thrown error', () => {
    new ExecutionSpan(tracer(), job(), 'worker-1').failed(sdkJobError('timeout', 'execution timeout of 5 s passed'), 2);
    const execute = spans.named('ojs.execute email.send');
    expect(execute.status.code).toBe(SpanStatusCode.ERROR);
    expect(execute.events[0]!.attributes).toMatchObject({
      'exception.type': 'timeout',
      'exception.message': 'execution timeout of 5 s passed',
    });
  });

  it('ends once: a cancelled job is no error, and a later outcome is ignored', () => {
    const span = new ExecutionSpan(tracer(), job(), 'worker-1');
    span.cancelled();
    span.failed(sdkJobError('shutdown', 'too late'), 2);
    span.succeeded();
    expect(spans.ended).toHaveLength(1);
    expect(spans.named('ojs.execute email.send').status).toEqual({ code: SpanStatusCode.OK });
  });
});

describe('W3C trace context in job meta', () => {
  it.each<[string, string]>([
    ['version 00', TRACEPARENT],
    ['a later version with fields appended', `01-${TRACE_ID}-${PARENT_ID}-01-future`],
  ])('reads a traceparent of %s', (_, traceparent) => {
    expect(spanContextOf({ traceparent })).toMatchObject({ traceId: TRACE_ID, spanId: PARENT_ID, traceFlags: 1, isRemote: true });
  });

  it.each<[string, unknown]>([
    ['version 00 with fields appended', `${TRACEPARENT}-extra`],
    ['version ff', `ff-${TRACE_ID}-${PARENT_ID}-01`],
    ['uppercase hex', TRACEPARENT.toUpperCase()],
    ['an all-zero trace id', `00-${'0'.repeat(32)}-${PARENT_ID}-01`],
    ['an all-zero parent id', `00-${TRACE_ID}-${'0'.repeat(16)}-01`],
    ['a short id', '00-own-01'],
    ['a number', 42],
  ])('reads no trace context from a traceparent of %s', (_, traceparent) => {
    expect(spanContextOf({ traceparent })).toBeUndefined();
  });

  it('reads no trace context from a job without meta or without a traceparent', () => {
    expect(spanContextOf(undefined)).toBeUndefined();
    expect(spanContextOf({ tracestate: 'vendor=1' })).toBeUndefined();
  });

  it("writes the caller's active span context as meta fields that read back the same, and nothing without one", () => {
    const remote: SpanContext = { traceId: TRACE_ID, spanId: PARENT_ID, traceFlags: 1, isRemote: true };
    const withState = spanContextOf({ traceparent: TRACEPARENT, tracestate: 'vendor=1,other=2' })!;
    expect(activeTraceMeta()).toBeUndefined();
    expect(context.with(trace.setSpanContext(ROOT_CONTEXT, remote), activeTraceMeta)).toEqual({ traceparent: TRACEPARENT });
    const meta = context.with(trace.setSpanContext(ROOT_CONTEXT, withState), activeTraceMeta);
    expect(meta).toEqual({ traceparent: TRACEPARENT, tracestate: 'vendor=1,other=2' });
    expect(spanContextOf(meta)).toMatchObject({ traceId: TRACE_ID, spanId: PARENT_ID, traceFlags: 1 });
  });
});
