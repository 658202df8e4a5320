import { randomUUID } from 'node:crypto';
import { Status } from 'nice-grpc';
import { JobState } from '../../gen/ojs/server/v1/job';
import type { WatchEventsResponse } from '../../gen/ojs/server/v1/operator_service';
import type { Delivery, FetchResponse } from '../../gen/ojs/server/v1/worker_service';
import { enqueueOne, getJob } from '../support/jobs';
import { ManualClock } from '../support/manual-clock';
import { anyOf, objectContaining } from '../support/matchers';
import { rpcError } from '../support/rpc-error';
import { StreamReader } from '../support/streams';
import { TestServer, type Clients } from '../support/test-server';
import { TestWorker, type BeatStream } from '../support/test-worker';
import type { DeepPartial, Job } from '../../gen/ojs/server/v1/job';

const hasDeliveries = (m: FetchResponse): boolean => m.deliveries.length > 0;

/** timeouts.md on the wire: soft timeouts on the Beat stream, reclaims, events, progress. */
describe('job timeouts', () => {
  const clock = new ManualClock();
  let server: TestServer;
  let clients: Clients;
  let events: StreamReader<WatchEventsResponse>;
  const open: { close(): void }[] = [];

  beforeAll(async () => {
    // A long worker heartbeat timeout keeps the workers of this file alive while the clock jumps.
    server = await TestServer.start({ clock, protocol: { heartbeatTimeoutMs: 3_600_000 } });
    clients = server.connect();
    const abort = new AbortController();
    const timeoutEvents = ['job.timeout', 'job.stalled', 'job.ttl_expired', 'job.total_timeout'];
    events = new StreamReader(clients.operator.watchEvents({ types: timeoutEvents }, { signal: abort.signal }), abort);
  });
  afterEach(() => {
    for (const stream of open.splice(0)) stream.close();
  });
  afterAll(async () => {
    events.close();
    await server.stop();
  });

  /** A worker with Beat and Fetch streams, holding the one job enqueued with `job`. */
  async function holding(job: DeepPartial<Job>): Promise<{ worker: TestWorker; beat: BeatStream; delivery: Delivery; queue: string }> {
    const queue = `q-${randomUUID().slice(0, 8)}`;
    const worker = await TestWorker.register(clients, { queues: [queue] });
    const beat = worker.openBeat();
    const fetch = worker.openFetch();
    open.push(beat, fetch);
    await beat.beat();
    await enqueueOne(clients, { queue, ...job });
    const delivery = (await fetch.nextMatching(hasDeliveries)).deliveries[0]!;
    await beat.beat(undefined, [delivery.job!.id]);
    return { worker, beat, delivery, queue };
  }

  const nextEvent = (jobId: string) => events.nextMatching((m) => m.event?.jobId === jobId).then((m) => m.event!);

  describe('validation (timeouts.md section 6)', () => {
    it.each([
      [{ timeout: 60, totalTimeout: 30 }, 'jobs[0].total_timeout'],
      [{ enqueueTtl: -1 }, 'jobs[0].enqueue_ttl'],
      [{ gracePeriod: -5 }, 'jobs[0].grace_period'],
      [{ heartbeatTimeout: -1 }, 'jobs[0].heartbeat_timeout'],
      [{ totalTimeout: -1 }, 'jobs[0].total_timeout'],
    ])('refuses %j with INVALID_ARGUMENT naming %s', async (fields, field) => {
      const error = await rpcError(enqueueOne(clients, fields));
      expect(error.code).toBe(Status.INVALID_ARGUMENT);
      expect(error.fields).toContain(field);
    });

    it('stores the limits, with defaults for what the producer left out', async () => {
      const job = await enqueueOne(clients, { timeout: 60, totalTimeout: 600, enqueueTtl: 30, gracePeriod: 0 });
      expect(job).toMatchObject({ timeout: 60, totalTimeout: 600, enqueueTtl: 30, gracePeriod: 0, heartbeatTimeout: 60 });
      expect(await enqueueOne(clients, {})).toMatchObject({
        timeout: 60,
        totalTimeout: 0,
        enqueueTtl: 0,
        gracePeriod: 30,
        heartbeatTimeout: 60,
      });
    });
  });

  it('tells the worker at the timeout, then reclaims the job when the grace period ends', async () => {
    const { beat, delivery } = await holding({ timeout: 10, gracePeriod: 5 });
    const jobId = delivery.job!.id;
    clock.advance(10_000);
    await server.runMaintenance();
    expect(await beat.responses.nextMatching((r) => r.timedOutJobIds.length > 0)).toMatchObject({ timedOutJobIds: [jobId], inReplyTo: 0 });
    // A worker that missed the push hears it again on its next beat.
    expect((await beat.beat(undefined, [jobId])).timedOutJobIds).toEqual([jobId]);
    expect((await getJob(clients, jobId)).state).toBe(JobState.JOB_STATE_ACTIVE);

    clock.advance(5_000);
    await server.runMaintenance();
    expect(await beat.responses.nextMatching((r) => r.reclaimedJobIds.length > 0)).toMatchObject({
      reclaimedJobIds: [jobId],
      inReplyTo: 0,
    });
    expect((await beat.beat(undefined, [jobId])).reclaimedJobIds).toEqual([jobId]);
    const reclaimed = await getJob(clients, jobId);
    expect(reclaimed).toMatchObject({
      state: JobState.JOB_STATE_RETRYABLE,
      error: { type: 'timeout', details: { timeout_kind: 'execution', limit_seconds: 10, elapsed_seconds: 15 } },
    });
    expect(await nextEvent(jobId)).toMatchObject({
      type: 'job.timeout',
      jobId,
      jobType: 'test.job',
      attempt: 1,
      data: { timeout_kind: 'execution', limit_seconds: 10, elapsed_seconds: 15 },
    });
    const span = server.spans.getFinishedSpans().find((s) => s.name === 'ojs.job.event' && s.attributes['ojs.job.id'] === jobId);
    expect(span?.events.map((e) => e.name)).toEqual(['job.timeout']);
  });

  it('accepts an answer during the grace period', async () => {
    const { worker, delivery } = await holding({ timeout: 10, gracePeriod: 5 });
    clock.advance(12_000);
    await server.runMaintenance();
    await worker.ack(delivery);
    expect((await getJob(clients, delivery.job!.id)).state).toBe(JobState.JOB_STATE_COMPLETED);
  });

  it('declares a job stalled when no beat mentions it for its heartbeat timeout', async () => {
    const { beat, delivery } = await holding({ heartbeatTimeout: 20 });
    const jobId = delivery.job!.id;
    clock.advance(19_000);
    await beat.beat(undefined, []);
    await server.runMaintenance();
    expect((await getJob(clients, jobId)).state).toBe(JobState.JOB_STATE_ACTIVE);
    clock.advance(1_000);
    await server.runMaintenance();
    expect(await getJob(clients, jobId)).toMatchObject({
      state: JobState.JOB_STATE_RETRYABLE,
      error: { type: 'stalled', details: { timeout_kind: 'stalled', limit_seconds: 20, elapsed_seconds: 20 } },
    });
    expect(await nextEvent(jobId)).toMatchObject({ type: 'job.stalled', data: { timeout_kind: 'stalled' } });
  });

  it('keeps a job whose worker lists it in its beats', async () => {
    const { beat, delivery } = await holding({ heartbeatTimeout: 20 });
    for (let i = 0; i < 3; i++) {
      clock.advance(15_000);
      await beat.beat(undefined, [delivery.job!.id]);
      await server.runMaintenance();
    }
    expect((await getJob(clients, delivery.job!.id)).state).toBe(JobState.JOB_STATE_ACTIVE);
  });

  it('discards a job that waited longer than its enqueue TTL', async () => {
    const job = await enqueueOne(clients, { queue: `idle-${randomUUID().slice(0, 8)}`, enqueueTtl: 5 });
    clock.advance(5_000);
    await server.runMaintenance();
    expect(await getJob(clients, job.id)).toMatchObject({
      state: JobState.JOB_STATE_DISCARDED,
      error: { type: 'enqueue_ttl_expired', details: { timeout_kind: 'enqueue_ttl', limit_seconds: 5, elapsed_seconds: 5 } },
    });
    expect(await nextEvent(job.id)).toMatchObject({ type: 'job.ttl_expired', workerId: '' });
  });

  it('discards instead of retrying when the next attempt could not finish within the total timeout', async () => {
    const { worker, delivery } = await holding({ timeout: 10, totalTimeout: 30, retry: { maxAttempts: 5 } });
    clock.advance(25_000);
    const failed = await worker.fail(delivery, { type: 'Boom' });
    expect(failed.state).toBe(JobState.JOB_STATE_DISCARDED);
    expect(await getJob(clients, delivery.job!.id)).toMatchObject({
      error: { type: 'total_timeout', details: { timeout_kind: 'total', limit_seconds: 30 } },
      errors: [{ type: 'Boom' }, { type: 'total_timeout' }],
    });
    expect(await nextEvent(delivery.job!.id)).toMatchObject({ type: 'job.total_timeout', workerId: worker.workerId });
  });

  it('discards an active job at its total timeout, whatever attempts remain', async () => {
    const { delivery } = await holding({ timeout: 20, totalTimeout: 20, retry: { maxAttempts: 5 } });
    clock.advance(20_000);
    await server.runMaintenance();
    expect(await getJob(clients, delivery.job!.id)).toMatchObject({
      state: JobState.JOB_STATE_DISCARDED,
      error: { type: 'total_timeout' },
    });
  });

  it('counts timeouts and measures attempts, waits and heartbeat ages as metrics', async () => {
    const { worker, delivery, queue } = await holding({ type: 'metric.job' });
    clock.advance(2_000);
    expect(await server.metrics.points('ojs.job.heartbeat.age')).toContainEqual({ attributes: { queue }, value: 2 });
    await worker.ack(delivery);
    const durations = await server.metrics.points('ojs.job.execution.duration');
    expect(durations).toContainEqual({
      attributes: { queue, job_type: 'metric.job', outcome: 'completed' },
      value: objectContaining({ count: 1, sum: 2 }),
    });
    expect(await server.metrics.points('ojs.job.enqueue.wait_time')).toContainEqual({
      attributes: { queue },
      value: objectContaining({ count: 1 }),
    });
    expect(await server.metrics.points('ojs.job.timeout.count')).toContainEqual({
      attributes: { timeout_kind: 'execution', queue: anyOf(String), job_type: 'test.job' },
      value: anyOf(Number),
    });
  });

  it('refuses an unknown event type to watch', async () => {
    const abort = new AbortController();
    const stream = new StreamReader(clients.operator.watchEvents({ types: ['job.nope'], queues: [] }, { signal: abort.signal }), abort);
    const error = await rpcError(stream.next());
    expect(error.code).toBe(Status.INVALID_ARGUMENT);
  });
});

describe('progress and checkpoints', () => {
  const clock = new ManualClock();
  let server: TestServer;
  let clients: Clients;

  beforeAll(async () => {
    server = await TestServer.start({ clock, protocol: { heartbeatTimeoutMs: 3_600_000 } });
    clients = server.connect();
  });
  afterAll(() => server.stop());

  async function held(job: DeepPartial<Job> = {}) {
    const queue = `q-${randomUUID().slice(0, 8)}`;
    const worker = await TestWorker.register(clients, { queues: [queue] });
    const fetch = worker.openFetch();
    await enqueueOne(clients, { queue, ...job });
    const delivery = (await fetch.nextMatching(hasDeliveries)).deliveries[0]!;
    return { worker, fetch, delivery };
  }

  it('records progress, keeps the highest value of the attempt, and hands the checkpoint to the next attempt', async () => {
    const { worker, fetch, delivery } = await held({ retry: { maxAttempts: 2 } });
    const report = (fields: object) =>
      clients.workers.reportProgress({ workerId: worker.workerId, jobId: delivery.job!.id, leaseToken: delivery.leaseToken, ...fields });
    expect(await report({ progress: 0.6, data: { rows: 600 } })).toMatchObject({ applied: true, leaseExpiresAt: anyOf(Date) });
    expect(await report({ progress: 2 })).toMatchObject({ applied: true });
    expect(await report({ progress: 0.1, checkpoint: { cursor: 'row-600' } })).toMatchObject({ applied: true });
    expect(await getJob(clients, delivery.job!.id)).toMatchObject({
      progress: 1,
      progressData: { rows: 600 },
      lastCheckpoint: { cursor: 'row-600' },
    });

    await worker.fail(delivery, { type: 'Boom' });
    clock.advance(60_000);
    await server.runMaintenance();
    const retried = (await fetch.nextMatching(hasDeliveries)).deliveries[0]!;
    expect(retried.job).toMatchObject({ attempt: 2, lastCheckpoint: { cursor: 'row-600' } });
    expect(retried.job!.progress).toBeUndefined();
    fetch.close();
  });

  it('ignores progress for a job the worker does not hold, and refuses an empty report', async () => {
    const { worker, fetch, delivery } = await held();
    const base = { workerId: worker.workerId, jobId: delivery.job!.id, leaseToken: delivery.leaseToken };
    expect(await clients.workers.reportProgress({ ...base, leaseToken: 'stale.1', progress: 0.5 })).toEqual({
      applied: false,
      leaseExpiresAt: undefined,
    });
    expect((await rpcError(clients.workers.reportProgress(base))).code).toBe(Status.INVALID_ARGUMENT);
    const tooBig = { blob: 'x'.repeat(5_000) };
    expect((await rpcError(clients.workers.reportProgress({ ...base, data: tooBig }))).fields).toContain('data');
    await worker.ack(delivery);
    expect(await clients.workers.reportProgress({ ...base, progress: 0.5 })).toMatchObject({ applied: false });
    expect((await getJob(clients, delivery.job!.id)).progress).toBeUndefined();
    fetch.close();
  });
});
