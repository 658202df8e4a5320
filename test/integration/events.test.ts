import { randomUUID } from 'node:crypto';
import { uuidv7 } from 'uuidv7';
import { HandlerCode } from '../../gen/ojs/server/v1/job';
import type { JobEvent } from '../../gen/ojs/server/v1/operator_service';
import { WorkerState, type Delivery, type FetchResponse } from '../../gen/ojs/server/v1/worker_service';
import { EventWatch, typesAndSubjects } from '../support/event-watch';
import { enqueue, enqueueOne } from '../support/jobs';
import { ManualClock } from '../support/manual-clock';
import { shareServer } from '../support/shared-server';
import { TestWorker } from '../support/test-worker';

const hasDeliveries = (m: FetchResponse): boolean => m.deliveries.length > 0;
const newQueue = (): string => `q-${randomUUID().slice(0, 8)}`;
const iso = (ms: number): string => new Date(ms).toISOString();

/** WatchEvents (ojs-events): one event per transition, with its envelope and data, and the watcher's filters. */
describe('lifecycle events', () => {
  const clock = new ManualClock();
  // A short keepalive: a watcher's first message tells the test that the server follows the log for it.
  const shared = shareServer({ clock, protocol: { streamKeepaliveMs: 50, heartbeatTimeoutMs: 3_600_000 } });

  /** A watch the server follows the log for. */
  async function watch(request: Parameters<typeof EventWatch.open>[1]): Promise<EventWatch> {
    const opened = EventWatch.open(shared.clients, request);
    shared.closeAfterTest(opened);
    return opened.opened();
  }

  /** A worker of `queue` taking one job at a time from its open Fetch stream. */
  async function worker(queue: string) {
    const registered = await TestWorker.register(shared.clients, { queues: [queue], concurrency: 1 });
    const fetch = registered.openFetch();
    shared.closeAfterTest(fetch);
    return { worker: registered, fetch, next: async (): Promise<Delivery> => (await fetch.nextMatching(hasDeliveries)).deliveries[0]! };
  }

  it('emits exactly one event per transition, with the envelope and data of ojs-events', async () => {
    const queue = newQueue();
    const events = await watch({ queues: [queue] });
    const { worker: w, fetch, next } = await worker(queue);
    const startedAt = clock.now();
    const done = await enqueueOne(shared.clients, {
      queue,
      meta: { traceparent: '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01' },
    });
    const doneDelivery = await next();
    await shared.clients.workers.reportProgress({
      workerId: w.workerId,
      jobId: done.id,
      leaseToken: doneDelivery.leaseToken,
      progress: 0.5,
    });
    clock.advance(2_000);
    await w.ack(doneDelivery, { ok: true });
    const failing = await enqueueOne(shared.clients, { queue, retry: { maxAttempts: 2 } });
    const retried = await w.fail(await next(), { type: 'Flaky', message: 'try 1' });
    clock.advance(retried.nextRetryAt!.getTime() - clock.now());
    await shared.server.runMaintenance();
    await w.fail(await next(), { type: 'Flaky', message: 'try 2', code: HandlerCode.HANDLER_CODE_UNSPECIFIED });
    fetch.close(); // The jobs below stay where the producer and the operator put them.
    const scheduled = await enqueueOne(shared.clients, { queue, scheduledAt: new Date(clock.now() + 60_000) });
    const [pending] = (await shared.clients.jobs.enqueue({ jobs: [{ type: 'test.job', queue }], pending: true })).jobs;
    await shared.clients.jobs.activateJob({ jobId: pending!.id });
    await shared.clients.jobs.cancelJob({ jobId: pending!.id });
    const expiring = await enqueueOne(shared.clients, { queue, expiresAt: new Date(clock.now() + 1_000) });
    clock.advance(1_000);
    await shared.server.runMaintenance();
    await shared.clients.jobs.retryJob({ jobId: failing.id });
    await shared.clients.operator.cancelJobs({
      selection: { target: { $case: 'jobIds', value: { ids: [failing.id] } } },
      reason: 'superseded',
    });

    const expected: [string, string][] = [
      ['job.enqueued', done.id],
      ['job.started', done.id],
      ['job.progress', done.id],
      ['job.completed', done.id],
      ['job.enqueued', failing.id],
      ['job.started', failing.id],
      ['job.failed', failing.id],
      ['job.retrying', failing.id],
      ['job.enqueued', failing.id],
      ['job.started', failing.id],
      ['job.failed', failing.id],
      ['job.discarded', failing.id],
      ['job.scheduled', scheduled.id],
      ['job.enqueued', pending!.id],
      ['job.enqueued', pending!.id],
      ['job.cancelled', pending!.id],
      ['job.enqueued', expiring.id],
      ['job.expired', expiring.id],
      ['job.enqueued', failing.id],
      ['job.cancelled', failing.id],
    ];
    const got = await events.until(
      (e) => e.length >= expected.length,
      () => `${expected.length} events`,
    );
    expect(typesAndSubjects(got)).toEqual(expected);
    expect(new Set(got.map((e) => e.id)).size).toBe(got.length);
    const workerSource = `ojs://test/workers/${w.workerId}`;
    for (const event of got) {
      expect(event).toMatchObject({ specversion: '1.0', queue, jobId: event.subject, jobType: 'test.job' });
      expect(event.source).toMatch(/^ojs:\/\/test\/(api|scheduler|workers\/.+)$/);
      expect(event.time).toBeInstanceOf(Date);
      expect(event.data).toMatchObject({ job_id: event.subject, job_type: 'test.job', queue });
    }
    const [enqueued, started, progress, completed] = got;
    const [failed, retrying, promoted, , , discarded, scheduledEvent] = got.slice(6);
    expect(enqueued).toMatchObject({ source: 'ojs://test/api', time: new Date(startedAt), data: { state: 'available' } });
    expect(enqueued!.data!['trace_id']).toBe('0af7651916cd43dd8448eb211c80319c');
    expect(started).toMatchObject({
      source: workerSource,
      workerId: w.workerId,
      attempt: 1,
      data: { state: 'active', worker_id: w.workerId },
    });
    expect(progress!.data).toMatchObject({ progress_percent: 50, worker_id: w.workerId, attempt: 1 });
    expect(completed).toMatchObject({
      source: workerSource,
      time: new Date(startedAt + 2_000),
      data: { state: 'completed', duration_ms: 2_000 },
    });
    expect(failed!.data).toMatchObject({ state: 'retryable', attempt: 1, error: { code: 'Flaky', message: 'try 1', retryable: true } });
    expect(retrying!.data).toMatchObject({ attempt: 1, max_attempts: 2, next_retry_at: iso(retried.nextRetryAt!.getTime()) });
    expect(promoted).toMatchObject({ source: 'ojs://test/scheduler', data: { state: 'available', reason: 'retry' } });
    expect(discarded!.data).toMatchObject({ state: 'discarded', total_attempts: 2, dead_letter: false, last_error: { code: 'Flaky' } });
    expect(scheduledEvent!.data).toMatchObject({ state: 'scheduled', scheduled_at: iso(scheduled.scheduledAt!.getTime()) });
    const [, activated, cancelled, , expired, revived, cancelledInBulk] = got.slice(13);
    expect(activated!.data).toMatchObject({ reason: 'activated' });
    expect(cancelled).toMatchObject({ source: 'ojs://test/api', data: { state: 'cancelled' } });
    expect(expired).toMatchObject({ source: 'ojs://test/scheduler', data: { state: 'discarded', expired_at: iso(clock.now()) } });
    expect(revived!.data).toMatchObject({ state: 'available', reason: 'manual_retry' });
    expect(cancelledInBulk).toMatchObject({ source: 'ojs://test/api', data: { state: 'cancelled', reason: 'superseded' } });
  });

  it('filters by event type, family, queue, job type and job id', async () => {
    const [q1, q2] = [newQueue(), newQueue()];
    const lastId = uuidv7();
    const queues = [q1, q2];
    const watches = {
      all: await watch({ queues }),
      completed: await watch({ types: ['job.completed'], queues }),
      jobFamily: await watch({ types: ['job.*'], queues }),
      q2: await watch({ queues: [q2] }),
      reports: await watch({ jobTypes: ['report.build'], queues }),
      last: await watch({ jobIds: [lastId] }),
    };
    const [j1, j2] = await enqueue(shared.clients, { queue: q1, type: 'mail.send' }, { queue: q1, type: 'report.build' });
    const j3 = await enqueueOne(shared.clients, { id: lastId, queue: q2, type: 'report.build' });
    await shared.clients.jobs.cancelJob({ jobId: j1!.id });
    await shared.clients.operator.pauseQueue({ queue: q1 });
    await shared.clients.operator.resumeQueue({ queue: q1 });
    // The last event of all (job.completed of j3) passes every filter: each watch has all it gets once it has that.
    const { worker: w, next } = await worker(q2);
    await w.ack(await next());

    const lastEvent = (e: JobEvent): boolean => e.type === 'job.completed' && e.jobId === lastId;
    const seen = async (name: keyof typeof watches) =>
      typesAndSubjects(await watches[name].untilEvent(lastEvent, `the completion of ${lastId} on the ${name} watch`));
    const ofJ3: [string, string][] = [
      ['job.enqueued', j3.id],
      ['job.started', j3.id],
      ['job.completed', j3.id],
    ];
    const enqueuedFirst: [string, string][] = [
      ['job.enqueued', j1!.id],
      ['job.enqueued', j2!.id],
    ];
    expect(await seen('all')).toEqual([
      ...enqueuedFirst,
      ['job.enqueued', j3.id],
      ['job.cancelled', j1!.id],
      ['queue.paused', q1],
      ['queue.resumed', q1],
      ...ofJ3.slice(1),
    ]);
    expect(await seen('completed')).toEqual([['job.completed', j3.id]]);
    expect(await seen('jobFamily')).toEqual([...enqueuedFirst, ['job.enqueued', j3.id], ['job.cancelled', j1!.id], ...ofJ3.slice(1)]);
    expect(await seen('q2')).toEqual(ofJ3);
    expect(await seen('reports')).toEqual([['job.enqueued', j2!.id], ...ofJ3]);
    expect(await seen('last')).toEqual(ofJ3);
  });

  it('tells of workers starting, going quiet, stopping and being declared dead', async () => {
    const workers = await watch({ types: ['worker.*'] });
    const queue = newQueue();
    const quitting = await TestWorker.register(shared.clients, { queues: [queue], concurrency: 4 });
    const beat = quitting.openBeat();
    shared.closeAfterTest(beat);
    await beat.beat(WorkerState.WORKER_STATE_QUIET);
    await shared.clients.workers.deregister({ workerId: quitting.workerId });
    const dying = await TestWorker.register(shared.clients, { queues: [queue] });
    const registeredAt = clock.now();
    clock.advance(3_600_001);
    await shared.server.runMaintenance();

    const mine = (e: JobEvent): boolean => e.subject === quitting.workerId || e.subject === dying.workerId;
    const got = (await workers.untilEvent((e) => e.type === 'worker.dead' && e.subject === dying.workerId, 'worker.dead')).filter(mine);
    expect(typesAndSubjects(got)).toEqual([
      ['worker.started', quitting.workerId],
      ['worker.quiet', quitting.workerId],
      ['worker.stopped', quitting.workerId],
      ['worker.started', dying.workerId],
      ['worker.dead', dying.workerId],
    ]);
    for (const event of got) {
      expect(event).toMatchObject({ specversion: '1.0', source: `ojs://test/workers/${event.subject}`, jobId: '', queue: '' });
      expect(event.data).toMatchObject({ worker_id: event.subject });
    }
    expect(got[0]!.data).toMatchObject({ queues: [queue], concurrency: 4 });
    expect(got[1]!.data).toMatchObject({ active_jobs: 0 });
    expect(got[4]!.data).toMatchObject({ last_beat_at: iso(registeredAt), uptime_ms: 3_600_001 });
  });

  it('sends heartbeat events live to the watchers that ask for them, and to no others', async () => {
    const queue = newQueue();
    const withBeats = await watch({ includeHeartbeats: true, queues: [] });
    const named = await watch({ types: ['worker.heartbeat', 'job.heartbeat'] });
    const stored = await watch({ queues: [queue] });
    const { worker: w, next } = await worker(queue);
    const job = await enqueueOne(shared.clients, { queue });
    const delivery = await next();
    const beat = w.openBeat();
    shared.closeAfterTest(beat);
    await beat.beat(WorkerState.WORKER_STATE_RUNNING, [job.id]);
    await shared.clients.workers.extendLease({ workerId: w.workerId, jobId: job.id, leaseToken: delivery.leaseToken });
    await w.ack(delivery);

    const beats = (
      await withBeats.until(
        (e) => e.filter((b) => b.type === 'job.heartbeat' && b.jobId === job.id).length === 2,
        () => 'two job.heartbeat events',
      )
    ).filter((e) => e.type.endsWith('.heartbeat') && (e.subject === w.workerId || e.jobId === job.id));
    expect(beats.map((e) => e.type).toSorted()).toEqual(['job.heartbeat', 'job.heartbeat', 'worker.heartbeat']);
    expect(beats.find((e) => e.type === 'worker.heartbeat')).toMatchObject({
      data: { worker_id: w.workerId, state: 'running', active_jobs: 1 },
    });
    for (const event of beats.filter((e) => e.type === 'job.heartbeat')) {
      expect(event).toMatchObject({ queue, workerId: w.workerId, data: { job_id: job.id, state: 'active', worker_id: w.workerId } });
      expect(typeof event.data!['visible_until']).toBe('string');
    }
    // The watchers that did not ask get the stored events only: the completion comes, and no beat before it.
    const plain = await stored.untilEvent((e) => e.type === 'job.completed', 'the completion');
    expect(plain.map((e) => e.type)).toEqual(['job.enqueued', 'job.started', 'job.completed']);
    expect(named.events).toEqual([]);
  });
});
