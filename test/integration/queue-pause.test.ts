import { randomUUID } from 'node:crypto';
import { Status } from 'nice-grpc';
import { HandlerCode, JobState } from '../../gen/ojs/server/v1/job';
import type { Delivery, FetchResponse } from '../../gen/ojs/server/v1/worker_service';
import { EventWatch } from '../support/event-watch';
import { enqueueOne, getJob } from '../support/jobs';
import { ManualClock } from '../support/manual-clock';
import { rpcError } from '../support/rpc-error';
import { shareServer } from '../support/shared-server';
import { TestWorker } from '../support/test-worker';

const S = JobState;
const MINUTE_MS = 60_000;
const hasDeliveries = (m: FetchResponse): boolean => m.deliveries.length > 0;
const newQueue = (): string => `q-${randomUUID().slice(0, 8)}`;
const idsOf = (deliveries: readonly Delivery[]): string[] => deliveries.map((d) => d.job!.id);

/** PauseQueue, ResumeQueue and GetQueueStats (ojs-queue-config, ojs-admin-api 6). */
describe('queue pause and stats', () => {
  const clock = new ManualClock();
  // Keepalives (which also make a Fetch stream look for work) are a minute apart, and
  // workers outlive the clock's jumps: what reaches a stream promptly was carried by a signal.
  const shared = shareServer({ clock, protocol: { heartbeatTimeoutMs: 24 * 3_600_000 } });

  /** A worker of `queues` whose Fetch stream is open and idle (it took a first job of the last queue). */
  async function idleWorker(queues: string[]) {
    const worker = await TestWorker.register(shared.clients, { queues });
    const fetch = worker.openFetch();
    shared.closeAfterTest(fetch);
    const probe = await enqueueOne(shared.clients, { queue: queues.at(-1)! });
    expect(idsOf((await fetch.nextMatching(hasDeliveries)).deliveries)).toEqual([probe.id]);
    return { worker, fetch };
  }

  /** Moves the clock to the start of the next minute. */
  function startMinute(): number {
    clock.advance(MINUTE_MS - (clock.now() % MINUTE_MS));
    return clock.now();
  }

  it("takes jobs into a paused queue and delivers none while the worker's other queue delivers, then delivers at once on resume", async () => {
    const [paused, other] = [newQueue(), newQueue()];
    const { fetch } = await idleWorker([paused, other]);
    expect((await shared.clients.operator.pauseQueue({ queue: paused })).queue).toMatchObject({ name: paused, paused: true });
    const held = await enqueueOne(shared.clients, { queue: paused });
    expect(held.state).toBe(S.JOB_STATE_AVAILABLE);
    const free = await enqueueOne(shared.clients, { queue: other });
    // Enqueued first and of the worker's first queue, the held job would have come first (or with it).
    expect(idsOf((await fetch.nextMatching(hasDeliveries)).deliveries)).toEqual([free.id]);
    expect((await getJob(shared.clients, held.id)).state).toBe(S.JOB_STATE_AVAILABLE);

    const resumed = (await shared.clients.operator.resumeQueue({ queue: paused })).queue;
    expect(resumed).toMatchObject({ name: paused, paused: false });
    // The counts are read after the resume, which has woken the worker: its claim may have taken the job by then.
    expect(resumed!.available + resumed!.active).toBe(1);
    expect(idsOf((await fetch.nextMatching(hasDeliveries)).deliveries)).toEqual([held.id]);
  });

  it('lists a paused queue, even without jobs, until it is resumed; pausing and resuming twice changes nothing more', async () => {
    const queue = newQueue();
    for (let i = 0; i < 2; i++)
      expect((await shared.clients.operator.pauseQueue({ queue })).queue).toMatchObject({ name: queue, paused: true });
    const listed = async () => (await shared.clients.operator.listQueues({ pageSize: 1_000 })).queues.find((q) => q.name === queue);
    expect(await listed()).toMatchObject({ name: queue, paused: true, available: 0, lag: undefined, oldestAvailableAt: undefined });
    expect((await shared.clients.operator.getQueueStats({ queue })).queue).toMatchObject({ paused: true });
    for (let i = 0; i < 2; i++)
      expect((await shared.clients.operator.resumeQueue({ queue })).queue).toMatchObject({ name: queue, paused: false });
    expect(await listed()).toBeUndefined();
  });

  it('refuses a queue name that cannot be one', async () => {
    for (const call of [
      () => shared.clients.operator.pauseQueue({ queue: 'Not A Queue' }),
      () => shared.clients.operator.resumeQueue({ queue: '' }),
      () => shared.clients.operator.getQueueStats({ queue: 'x'.repeat(200) }),
    ]) {
      expect(await rpcError(call)).toMatchObject({ code: Status.INVALID_ARGUMENT, reason: 'invalid_request', fields: ['queue'] });
    }
  });

  it('reports the counts per state and how long the job that runs next has waited', async () => {
    const queue = newQueue();
    const first = await enqueueOne(shared.clients, { queue });
    clock.advance(1_000);
    await enqueueOne(shared.clients, { queue });
    await enqueueOne(shared.clients, { queue, scheduledAt: new Date(clock.now() + 3_600_000) });
    await shared.clients.jobs.enqueue({ jobs: [{ type: 'test.job', queue }], pending: true });
    clock.advance(5_000);
    const { queue: info } = await shared.clients.operator.getQueueStats({ queue });
    expect(info).toEqual(
      expect.objectContaining({
        name: queue,
        paused: false,
        available: 2,
        scheduled: 1,
        pending: 1,
        active: 0,
        oldestAvailableAt: first.enqueuedAt,
        lag: { seconds: 6, nanos: 0 },
      }),
    );
    const listed = (await shared.clients.operator.listQueues({ pageSize: 1_000 })).queues.find((q) => q.name === queue);
    expect(listed).toEqual(info);
  });

  it('counts completed, failed and discarded jobs per minute over the last hour', async () => {
    const queue = newQueue();
    const worker = await TestWorker.register(shared.clients, { queues: [queue], concurrency: 1 });
    const fetch = worker.openFetch();
    shared.closeAfterTest(fetch);
    const run = async (settle: (delivery: Delivery) => Promise<unknown>, retry?: { maxAttempts: number }) => {
      await enqueueOne(shared.clients, { queue, ...(retry === undefined ? {} : { retry }) });
      await settle((await fetch.nextMatching(hasDeliveries)).deliveries[0]!);
    };
    const first = startMinute();
    await run((d) => worker.ack(d));
    await run((d) => worker.ack(d));
    await run((d) => worker.fail(d, { type: 'Flaky' }), { maxAttempts: 3 }); // failed, retried later
    const second = startMinute();
    await run((d) => worker.fail(d, { type: 'Bad', code: HandlerCode.HANDLER_CODE_DISCARD })); // failed and discarded
    // Paused, so that the idle worker leaves the next jobs waiting.
    await shared.clients.operator.pauseQueue({ queue });
    await enqueueOne(shared.clients, { queue, expiresAt: new Date(clock.now() + 1_000) }); // discarded, not failed
    await shared.clients.jobs.cancelJob({ jobId: (await enqueueOne(shared.clients, { queue })).id }); // counts for nothing
    clock.advance(1_000);
    await shared.server.runMaintenance();

    const { minutes } = await shared.clients.operator.getQueueStats({ queue });
    expect(minutes).toHaveLength(60);
    expect(minutes.map((m) => m.minute!.getTime())).toEqual(Array.from({ length: 60 }, (_, i) => second - (59 - i) * MINUTE_MS));
    expect(minutes.slice(-2)).toEqual([
      { minute: new Date(first), completed: 2, failed: 1, discarded: 0 },
      { minute: new Date(second), completed: 0, failed: 1, discarded: 2 },
    ]);
    expect(minutes.slice(0, -2).every((m) => m.completed + m.failed + m.discarded === 0)).toBe(true);

    // An hour on, the first minute has left the window and the second is the oldest.
    clock.advance(59 * MINUTE_MS);
    const later = (await shared.clients.operator.getQueueStats({ queue })).minutes;
    expect(later[0]).toEqual({ minute: new Date(second), completed: 0, failed: 1, discarded: 2 });
    expect(later.slice(1).every((m) => m.completed + m.failed + m.discarded === 0)).toBe(true);
    await shared.clients.operator.resumeQueue({ queue });
  });

  it('answers zeros for a queue that holds no jobs', async () => {
    const { queue, minutes } = await shared.clients.operator.getQueueStats({ queue: newQueue() });
    expect(queue).toMatchObject({ paused: false, available: 0, completed: 0, discarded: 0, lag: undefined });
    expect(minutes).toHaveLength(60);
    expect(minutes.every((m) => m.completed + m.failed + m.discarded === 0)).toBe(true);
  });
});

describe('queue events', () => {
  // A short keepalive: a watcher's first message tells the test that the server follows the log for it.
  const shared = shareServer({ protocol: { streamKeepaliveMs: 50 } });

  it('emits queue.paused and queue.resumed once per change', async () => {
    const queue = newQueue();
    const watch = await EventWatch.open(shared.clients, { types: ['queue.*'], queues: [queue] }).opened();
    try {
      await shared.clients.operator.pauseQueue({ queue });
      await shared.clients.operator.pauseQueue({ queue });
      await shared.clients.operator.resumeQueue({ queue });
      await shared.clients.operator.resumeQueue({ queue });
      await shared.clients.operator.pauseQueue({ queue });
      const events = await watch.until(
        (e) => e.length >= 3,
        () => 'three queue events',
      );
      expect(events.map((e) => e.type)).toEqual(['queue.paused', 'queue.resumed', 'queue.paused']);
      for (const event of events) {
        expect(event).toMatchObject({
          specversion: '1.0',
          source: 'ojs://test/api',
          subject: queue,
          queue,
          jobId: '',
          data: { queue },
        });
        expect(event.id).not.toBe('');
        expect(event.time).toBeInstanceOf(Date);
      }
      expect(new Set(events.map((e) => e.id)).size).toBe(3);
    } finally {
      watch.close();
      await shared.clients.operator.resumeQueue({ queue });
    }
  });
});
