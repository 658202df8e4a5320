import { SpanKind, SpanStatusCode, trace } from '@opentelemetry/api';
import { JobFailure, Producer, Worker } from '../../packages/sdk/src';
import { RecordingLogger } from '../support/silent-logger';
import { TestServer } from '../support/test-server';
import { RecordedSpans } from './recorded-spans';

const TRACE_ID = '4bf92f3577b34da6a3ce929d0e0e4736';
const PARENT_ID = '00f067aa0ba902b7';

/**
 * One trace per job, on the SDK's side: a real SDK worker runs each handler
 * in an `ojs.execute <type>` span that continues the job's trace, with the
 * handler's own spans inside it, and a producer puts its caller's trace
 * context into the jobs it enqueues. The application's OpenTelemetry SDK is
 * registered in-process, as an application would register one.
 */
describe('tracing through the SDK', () => {
  let spans: RecordedSpans;
  let server: TestServer;
  let producer: Producer;
  let worker: Worker;

  beforeAll(async () => {
    spans = RecordedSpans.register();
    server = await TestServer.start();
    producer = new Producer({ address: server.address });
    const app = trace.getTracer('app');
    worker = new Worker({ address: server.address, queues: ['traced'], concurrency: 2, logger: new RecordingLogger() })
      .handle('traced.step', async ([n]) => {
        await Promise.resolve();
        return app.startActiveSpan('app.compute', (span) => {
          span.end();
          return Number(n) + 1;
        });
      })
      .handle('traced.broken', async () => {
        throw new JobFailure('cannot reach the ledger', { type: 'ledger.unreachable' });
      });
    await worker.start();
  });
  afterEach(() => spans.reset());
  afterAll(async () => {
    producer.close();
    await worker.stop({ force: true });
    await server.stop();
    await spans.unregister();
  });

  it("runs a handler in an ojs.execute span whose parent is the job's traceparent, its own spans nested inside", async () => {
    const job = await producer.enqueue({
      type: 'traced.step',
      queue: 'traced',
      args: [41],
      meta: { traceparent: `00-${TRACE_ID}-${PARENT_ID}-01` },
    });
    expect(await producer.result(job)).toBe(42);
    const execute = spans.named('ojs.execute traced.step');
    expect(execute.kind).toBe(SpanKind.CONSUMER);
    expect(execute.spanContext().traceId).toBe(TRACE_ID);
    expect(execute.parentSpanContext).toMatchObject({ spanId: PARENT_ID, isRemote: true });
    expect(execute.attributes).toEqual({
      'messaging.system': 'ojs',
      'ojs.job.id': job.id,
      'ojs.job.type': 'traced.step',
      'ojs.job.queue': 'traced',
      'ojs.job.attempt': 1,
      'ojs.worker.id': worker.workerId,
    });
    expect(execute.status).toEqual({ code: SpanStatusCode.OK });
    const compute = spans.named('app.compute');
    expect(compute.spanContext().traceId).toBe(TRACE_ID);
    expect(compute.parentSpanContext?.spanId).toBe(execute.spanContext().spanId);
  });

  it("records a failing handler's error on its span", async () => {
    const job = await producer.enqueue({ type: 'traced.broken', queue: 'traced', retry: { maxAttempts: 1 } });
    await expect(producer.result(job)).rejects.toThrow(/ledger.unreachable: cannot reach the ledger/);
    const execute = spans.named('ojs.execute traced.broken');
    expect(execute.status).toEqual({ code: SpanStatusCode.ERROR, message: 'cannot reach the ledger' });
    expect(execute.attributes).toMatchObject({ 'error.type': 'ledger.unreachable', 'ojs.job.error.attempt': 1 });
    expect(execute.events.map((event) => event.name)).toEqual(['exception']);
  });

  it("carries the producer's active trace into the job, so that its execution joins the producer's trace", async () => {
    const { job, checkout } = await trace.getTracer('app').startActiveSpan('checkout', async (span) => {
      const enqueued = await producer.enqueue({ type: 'traced.step', queue: 'traced', args: [1] });
      span.end();
      return { job: enqueued, checkout: span.spanContext() };
    });
    expect(job.meta).toEqual({ traceparent: `00-${checkout.traceId}-${checkout.spanId}-01` });
    await producer.result(job);
    const execute = spans.named('ojs.execute traced.step');
    expect(execute.spanContext().traceId).toBe(checkout.traceId);
    expect(execute.parentSpanContext?.spanId).toBe(checkout.spanId);
  });

  it("keeps a traceparent the producer's caller set in meta over its active trace", async () => {
    const own = `00-${TRACE_ID}-${PARENT_ID}-01`;
    const job = await trace
      .getTracer('app')
      .startActiveSpan('checkout', async (span) =>
        producer.enqueue({ type: 'traced.step', queue: 'traced', args: [1], meta: { traceparent: own } }).finally(() => span.end()),
      );
    expect(job.meta).toEqual({ traceparent: own });
  });
});
