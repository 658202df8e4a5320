import { randomUUID } from 'node:crypto';
import { SpanKind, SpanStatusCode } from '@opentelemetry/api';
import type { ReadableSpan } from '@opentelemetry/sdk-trace-base';
import { createClient, Metadata } from 'nice-grpc';
import { WorkflowServiceDefinition } from '../../gen/ojs/server/v1/workflow_service';
import type { DeepPartial, Job } from '../../gen/ojs/server/v1/job';
import { WorkerState, type Delivery, type FetchResponse } from '../../gen/ojs/server/v1/worker_service';
import { enqueueOne, jobSpec } from '../support/jobs';
import { ManualClock } from '../support/manual-clock';
import { objectContaining } from '../support/matchers';
import { producerSpan } from '../support/producer-span';
import type { StreamReader } from '../support/streams';
import { shareServer } from '../support/shared-server';
import { TestWorker } from '../support/test-worker';

const hasDeliveries = (m: FetchResponse): boolean => m.deliveries.length > 0;
const newQueue = (): string => `q-${randomUUID().slice(0, 8)}`;

describe('OpenTelemetry spans', () => {
  const clock = new ManualClock();
  // Workers live until a test advances the clock past this.
  const heartbeatTimeoutMs = 3_600_000;
  const shared = shareServer({ clock, protocol: { heartbeatTimeoutMs } });

  /**
   * A job's spans in the order of its transitions. Spans are recorded as each
   * call returns, so the claim an enqueue wakes may be recorded before the
   * enqueue's own span: the job's creation comes first whatever the recording order.
   */
  const spansOf = (jobId: string, name = 'ojs.job.transition'): ReadableSpan[] =>
    shared.server.spans
      .getFinishedSpans()
      .filter((s) => s.name === name && s.attributes['ojs.job.id'] === jobId)
      .toSorted((a, b) => Number(b.attributes['ojs.job.state.from'] === 'none') - Number(a.attributes['ojs.job.state.from'] === 'none'));

  /** A worker with a Fetch stream open on a queue of its own. */
  async function fetching(): Promise<{ queue: string; worker: TestWorker; fetch: StreamReader<FetchResponse> }> {
    const queue = newQueue();
    const worker = await TestWorker.register(shared.clients, { queues: [queue] });
    const fetch = worker.openFetch();
    shared.closeAfterTest(fetch);
    return { queue, worker, fetch };
  }

  const nextDelivery = async (fetch: StreamReader<FetchResponse>): Promise<Delivery> =>
    (await fetch.nextMatching(hasDeliveries)).deliveries[0]!;

  it('records a span for every job transition, carrying states, ids, type, queue, attempt and worker', async () => {
    const { queue, worker, fetch } = await fetching();
    const job = await enqueueOne(shared.clients, { queue, type: 'trace.me' });
    await worker.fail(await nextDelivery(fetch), { type: 'Boom', message: 'it broke' });
    const common = { 'messaging.system': 'ojs', 'ojs.job.id': job.id, 'ojs.job.type': 'trace.me', 'ojs.job.queue': queue };
    expect(spansOf(job.id).map((s) => s.attributes)).toEqual([
      { ...common, 'ojs.job.state.from': 'none', 'ojs.job.state.to': 'available', 'ojs.job.state': 'available', 'ojs.job.attempt': 0 },
      {
        ...common,
        'ojs.job.state.from': 'available',
        'ojs.job.state.to': 'active',
        'ojs.job.state': 'active',
        'ojs.job.attempt': 1,
        'ojs.worker.id': worker.workerId,
      },
      {
        ...common,
        'ojs.job.state.from': 'active',
        'ojs.job.state.to': 'retryable',
        'ojs.job.state': 'retryable',
        'ojs.job.attempt': 1,
        'ojs.worker.id': worker.workerId,
        'error.type': 'Boom',
        'error.message': 'it broke',
      },
    ]);
    expect(spansOf(job.id).map((s) => s.status.code)).toEqual([SpanStatusCode.UNSET, SpanStatusCode.UNSET, SpanStatusCode.ERROR]);
  });

  it('carries on each transition span the lifecycle events it stands for, with their data', async () => {
    const { queue, worker, fetch } = await fetching();
    const job = await enqueueOne(shared.clients, { queue, type: 'trace.events', retry: { maxAttempts: 2 } });
    const first = await nextDelivery(fetch);
    clock.advance(40);
    await worker.fail(first, { type: 'Boom', message: 'it broke' });
    expect(spansOf(job.id).map((s) => s.events.map((e) => e.name))).toEqual([
      ['job.enqueued'],
      ['job.started'],
      ['job.failed', 'job.retrying'],
    ]);
    const [failed, retrying] = spansOf(job.id)[2]!.events;
    const data = { job_id: job.id, job_type: 'trace.events', queue, state: 'retryable' };
    expect(failed!.attributes).toMatchObject({
      ...data,
      worker_id: worker.workerId,
      attempt: 1,
      duration_ms: 40,
      'error.code': 'Boom',
      'error.message': 'it broke',
      'error.retryable': true,
    });
    expect(retrying!.attributes).toMatchObject({ ...data, attempt: 1, max_attempts: 2, 'error.code': 'Boom' });
  });

  it('records a timeout on its transition span, and as an ojs.job.event span under it', async () => {
    const { queue, fetch } = await fetching();
    const job = await enqueueOne(shared.clients, { queue, type: 'trace.slow', timeout: 10, gracePeriod: 0 });
    await nextDelivery(fetch);
    clock.advance(10_000);
    await shared.server.runMaintenance();
    const reclaim = spansOf(job.id).at(-1)!;
    expect(reclaim.events.map((e) => e.name)).toEqual(['job.failed', 'job.retrying', 'job.timeout']);
    expect(reclaim.events[2]!.attributes).toMatchObject({ timeout_kind: 'execution', limit_seconds: 10, elapsed_seconds: 10, attempt: 1 });
    const [event] = spansOf(job.id, 'ojs.job.event');
    expect(event!.parentSpanContext?.spanId).toBe(reclaim.spanContext().spanId);
    expect(event!.attributes).toMatchObject({
      'ojs.event.type': 'job.timeout',
      'ojs.timeout.kind': 'execution',
      'ojs.timeout.limit_seconds': 10,
      'ojs.timeout.elapsed_seconds': 10,
    });
    expect(event!.events.map((e) => e.name)).toEqual(['job.timeout']);
  });

  it("puts every transition span of a job in the trace of the producer's span, under it (traceparent in gRPC metadata)", async () => {
    const producer = producerSpan();
    const { queue, worker, fetch } = await fetching();
    const [job] = (
      await shared.clients.jobs.enqueue(
        { jobs: [jobSpec({ queue, type: 'trace.one' })] },
        { metadata: Metadata({ traceparent: producer.traceparent }) },
      )
    ).jobs;
    await worker.ack(await nextDelivery(fetch));
    const spans = spansOf(job!.id);
    expect(spans.map((s) => s.attributes['ojs.job.state.to'])).toEqual(['available', 'active', 'completed']);
    for (const span of spans) {
      expect(span.spanContext().traceId).toBe(producer.context.traceId);
      expect(span.parentSpanContext).toMatchObject({ traceId: producer.context.traceId, spanId: producer.context.spanId, isRemote: true });
    }
    // The enqueue is where the job enters the queue: a PRODUCER span (ojs-events 8.4).
    expect(spans.map((s) => s.kind)).toEqual([SpanKind.PRODUCER, SpanKind.INTERNAL, SpanKind.INTERNAL]);
  });

  it('joins the trace a producer set in meta.traceparent, through to a cancellation', async () => {
    const producer = producerSpan();
    const job = await enqueueOne(shared.clients, { queue: newQueue(), meta: { traceparent: producer.traceparent } });
    await shared.clients.jobs.cancelJob({ jobId: job.id });
    const spans = spansOf(job.id);
    expect(spans.map((s) => [s.spanContext().traceId, s.parentSpanContext?.spanId, s.attributes['ojs.job.state.to']])).toEqual([
      [producer.context.traceId, producer.context.spanId, 'available'],
      [producer.context.traceId, producer.context.spanId, 'cancelled'],
    ]);
  });

  it("makes a workflow one trace: its span is under the producer's, and its jobs' spans under it", async () => {
    const producer = producerSpan();
    const { queue, worker, fetch } = await fetching();
    const workflows = createClient(WorkflowServiceDefinition, shared.clients.channel);
    const steps = [
      { kind: { $case: 'job' as const, value: jobSpec({ queue, type: 'trace.first' }) } },
      { kind: { $case: 'job' as const, value: jobSpec({ queue, type: 'trace.second' }) } },
    ];
    const { workflow } = await workflows.createWorkflow(
      { definition: { kind: { $case: 'chain', value: { name: 'traced', steps } } } },
      { metadata: Metadata({ traceparent: producer.traceparent }) },
    );
    await worker.ack(await nextDelivery(fetch));
    await worker.ack(await nextDelivery(fetch));
    const span = shared.server.spans.getFinishedSpans().find((s) => s.attributes['ojs.workflow.id'] === workflow!.id);
    expect(span).toMatchObject({ name: 'ojs.workflow traced', kind: SpanKind.INTERNAL });
    expect(span!.spanContext().traceId).toBe(producer.context.traceId);
    expect(span!.parentSpanContext?.spanId).toBe(producer.context.spanId);
    for (const step of workflow!.steps) {
      const spans = spansOf(step.jobId);
      expect(spans.length).toBeGreaterThan(0);
      for (const jobSpan of spans)
        expect(jobSpan.parentSpanContext).toMatchObject({ traceId: producer.context.traceId, spanId: span!.spanContext().spanId });
    }
  });

  it("follows the producer's sampling decision: the spans of a job in an unsampled trace are not recorded", async () => {
    const producer = producerSpan();
    const unsampled = `00-${producer.context.traceId}-${producer.context.spanId}-00`;
    const job = await enqueueOne(shared.clients, { queue: newQueue(), meta: { traceparent: unsampled } });
    await shared.clients.jobs.cancelJob({ jobId: job.id });
    expect(spansOf(job.id)).toEqual([]);
  });

  it.each([
    ['not a traceparent'],
    ['00-00000000000000000000000000000000-00f067aa0ba902b7-01'],
    ['ff-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01'],
    ['00-4BF92F3577B34DA6A3CE929D0E0E4736-00F067AA0BA902B7-01'],
  ])('records the spans of a job whose traceparent is malformed (%s) as traces of their own', async (traceparent) => {
    const job = await enqueueOne(shared.clients, { queue: newQueue(), meta: { traceparent } });
    const spans = spansOf(job.id);
    expect(spans).toHaveLength(1);
    expect(spans[0]!.parentSpanContext).toBeUndefined();
  });

  it('records a span for every worker transition, up to its removal', async () => {
    const worker = await TestWorker.register(shared.clients);
    const beat = worker.openBeat();
    await beat.beat(WorkerState.WORKER_STATE_QUIET);
    beat.close();
    clock.advance(heartbeatTimeoutMs + 1);
    await shared.server.runMaintenance();
    const transitions = shared.server.spans
      .getFinishedSpans()
      .filter((s) => s.name === 'ojs.worker.transition' && s.attributes['ojs.worker.id'] === worker.workerId)
      .map((s) => [s.attributes['ojs.worker.state.from'], s.attributes['ojs.worker.state.to'], s.attributes['ojs.worker.reason']]);
    expect(transitions).toEqual([
      ['none', 'running', undefined],
      ['running', 'quiet', undefined],
      ['quiet', 'terminated', 'dead'],
    ]);
  });
});

/** The bucket boundaries ojs-events 7.2 gives, and ours for seconds (a millisecond to an hour). */
const DURATION_MS_BUCKETS = [5, 10, 25, 50, 100, 250, 500, 1000, 2500, 5000, 10000, 30000, 60000, 300000];
const WAIT_MS_BUCKETS = [10, 50, 100, 500, 1000, 5000, 10000, 30000, 60000, 300000, 600000];
const SECONDS_BUCKETS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300, 600, 1800, 3600];

/** A histogram point's value holding a single observation: its sum and the bucket it fell in. */
function oneObservation(boundaries: number[], value: number, bucket: number): unknown {
  const counts = Array.from({ length: boundaries.length + 1 }, () => 0);
  counts[bucket] = 1;
  return objectContaining({ count: 1, sum: value, buckets: { boundaries, counts } });
}

describe('OpenTelemetry metrics', () => {
  const clock = new ManualClock();
  // A long worker heartbeat timeout keeps the workers alive while the clock jumps.
  const shared = shareServer({ clock, protocol: { heartbeatTimeoutMs: 3_600_000 } });

  /** The value of `metric` for these attributes exactly, or undefined when it has no such point. */
  async function valueOf(metric: string, attributes: Record<string, string>): Promise<unknown> {
    const points = await shared.server.metrics.points(metric);
    return points.find((p) => JSON.stringify(p.attributes) === JSON.stringify(attributes))?.value;
  }

  async function worker(queue: string, concurrency = 10) {
    const w = await TestWorker.register(shared.clients, { queues: [queue], concurrency });
    const fetch = w.openFetch();
    shared.closeAfterTest(fetch);
    const settle = async (job: DeepPartial<Job>, how: (d: Delivery) => Promise<unknown>): Promise<void> => {
      await enqueueOne(shared.clients, { queue, type: 'count.job', ...job });
      await how((await fetch.nextMatching(hasDeliveries)).deliveries[0]!);
    };
    return { w, fetch, settle };
  }

  it('counts jobs enqueued, completed, retried, failed and discarded, by queue and job type', async () => {
    const queue = newQueue();
    await enqueueOne(shared.clients, { queue, type: 'count.job', enqueueTtl: 1 });
    clock.advance(2_000);
    await shared.server.runMaintenance(); // expires it: discarded, but no attempt failed
    const { w, settle } = await worker(queue);
    await settle({}, (d) => w.ack(d));
    await settle({ retry: { maxAttempts: 2 } }, (d) => w.fail(d, { type: 'Boom' }));
    await settle({ retry: { maxAttempts: 1 } }, (d) => w.fail(d, { type: 'Boom' }));
    const labels = { queue, job_type: 'count.job' };
    expect({
      enqueued: await valueOf('ojs.jobs.enqueued', labels),
      completed: await valueOf('ojs.jobs.completed', labels),
      retried: await valueOf('ojs.jobs.retried', labels),
      failed: await valueOf('ojs.jobs.failed', labels),
      discarded: await valueOf('ojs.jobs.discarded', labels),
    }).toEqual({ enqueued: 4, completed: 1, retried: 1, failed: 1, discarded: 2 });
  });

  it('measures waits and attempt durations in milliseconds with the buckets of ojs-events 7.2, and in seconds from 1 ms to an hour', async () => {
    const queue = newQueue();
    await enqueueOne(shared.clients, { queue, type: 'count.job' });
    clock.advance(300);
    const { w, fetch } = await worker(queue);
    const delivery = (await fetch.nextMatching(hasDeliveries)).deliveries[0]!;
    clock.advance(1_500);
    await w.ack(delivery);
    const labels = { queue, job_type: 'count.job' };
    expect(await valueOf('ojs.jobs.wait_ms', labels)).toEqual(oneObservation(WAIT_MS_BUCKETS, 300, 3));
    expect(await valueOf('ojs.jobs.duration_ms', labels)).toEqual(oneObservation(DURATION_MS_BUCKETS, 1_500, 8));
    expect(await valueOf('ojs.job.enqueue.wait_time', { queue })).toEqual(oneObservation(SECONDS_BUCKETS, 0.3, 8));
    expect(await valueOf('ojs.job.execution.duration', { ...labels, outcome: 'completed' })).toEqual(
      oneObservation(SECONDS_BUCKETS, 1.5, 10),
    );
  });

  it('reports the jobs of each queue by state as gauges, read from the store at each collection', async () => {
    const queue = newQueue();
    const { w, fetch, settle } = await worker(queue, 1);
    await settle({ retry: { maxAttempts: 1 } }, (d) => w.fail(d, { type: 'Boom' }));
    let held: Delivery | undefined;
    await settle({}, async (d) => (held = d));
    await enqueueOne(shared.clients, { queue }); // the worker's one slot is taken: it stays available
    expect([
      await valueOf('ojs.queue.depth', { queue }),
      await valueOf('ojs.queue.active', { queue }),
      await valueOf('ojs.dead_letter.depth', { queue }),
    ]).toEqual([1, 1, 1]);
    await w.ack(held!);
    await fetch.nextMatching(hasDeliveries); // the freed slot takes the waiting job
    const byState = (await shared.server.metrics.points('ojs.queue.jobs')).filter((p) => p.attributes['queue'] === queue);
    expect(Object.fromEntries(byState.map((p) => [p.attributes['state'], p.value]))).toEqual({
      scheduled: 0,
      available: 0,
      pending: 0,
      active: 1,
      completed: 1,
      retryable: 0,
      cancelled: 0,
      discarded: 1,
    });
  });
});
