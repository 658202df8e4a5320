import type { Job } from '../../src/domain/job';
import { MemoryJobStore } from '../../src/store/memory/memory-job-store';
import { zeroCounts, type MemoryTables } from '../../src/store/memory/memory-tables';
import { StoreHarness, T0, VISIBILITY_MS } from './store-harness';

const RETAIN_NOTHING = { completedMs: 0, cancelledMs: 0, discardedMs: 0, maxJobs: 0 };

/** What the memory store keeps beyond the port: its tables, reached into on purpose. */
describe('the memory store tables', () => {
  let h: StoreHarness;
  let store: MemoryJobStore;
  let tables: MemoryTables;

  beforeEach(() => {
    store = new MemoryJobStore();
    tables = store['tables'];
    h = new StoreHarness(store);
  });
  afterEach(() => h.close());

  /** A worker holding one claimed job, next to a scheduled, an expiring and a finished job. */
  async function busyStore() {
    const worker = await h.register({ queues: ['default', 'other'] });
    await h.enqueue({ expiresAt: T0 + 600_000 });
    const [scheduled, waiting, done] = await h.enqueue(
      { queue: 'other', scheduledAt: T0 + 60_000 },
      { queue: 'other', expiresAt: T0 + 600_000 },
      { queue: 'other' },
    );
    const [claimed] = (await h.claim(worker.workerId, ['default'], 1)).jobs;
    await store.cancel(done!.id, T0);
    expect(await store.audit()).toEqual([]);
    return { worker, held: claimed!, scheduled: scheduled!, waiting: waiting!, done: done! };
  }

  it('finds nothing wrong after every kind of change', async () => {
    const worker = await h.register({ queues: ['default', 'other'] });
    const jobs = await h.enqueue(
      { timeoutSeconds: 10 },
      { retry: { maxAttempts: 1 } },
      {},
      { queue: 'other', scheduledAt: T0 + 1_000, expiresAt: T0 + 5_000 },
      { queue: 'other', enqueueTtlSeconds: 1 },
    );
    const pending = h.job({ queue: 'other' }, { pending: true });
    await store.enqueue([pending]);
    const claimed = (await h.claim(worker.workerId, ['default'], 3, T0)).jobs;
    const [slow, doomed, flaky] = claimed;
    await h.beat(
      worker.workerId,
      'running',
      claimed.map((job) => job.id),
      1,
      T0 + 500,
    );
    await store.recordProgress({
      workerId: worker.workerId,
      jobId: slow!.id,
      leaseToken: slow!.lease!.token,
      progress: 0.5,
      now: T0 + 600,
    });
    const fail = (job: Job, now: number) =>
      store.fail({
        workerId: worker.workerId,
        items: [{ jobId: job.id, leaseToken: job.lease!.token, outcome: h.outcome(job, { type: 'Boom', message: '' }, now) }],
        now,
      });
    await fail(doomed!, T0 + 700);
    await fail(flaky!, T0 + 700);
    await store.retry(doomed!.id, T0 + 800);
    await store.activate(pending.id, T0 + 800);
    expect(await store.takeDueSoftTimeouts(T0 + 10_000, 10)).toEqual([{ jobId: slow!.id, workerId: worker.workerId }]);
    await store.promoteDue(T0 + 10_000, 10);
    await h.expireWaiting(T0 + 10_000);
    expect(await store.audit()).toEqual([]);
    const now = T0 + 10_000 + VISIBILITY_MS;
    const expired = await store.findExpiredLeases(now, 10);
    const outcome = (job: Job) => h.outcome(job, { type: 'visibility_timeout', message: '' }, now);
    await store.recover({
      items: expired.map((job) => ({ jobId: job.id, leaseToken: job.lease!.token, outcome: outcome(job), requireExpired: true })),
      now,
    });
    const again = (await h.claim(worker.workerId, ['default', 'other'], 10, now)).jobs;
    const recoveries = again.map((job) => ({ jobId: job.id, leaseToken: job.lease!.token, outcome: outcome(job) }));
    expect((await store.removeWorker({ workerId: worker.workerId, reason: 'deregistered', recoveries, now })).removed).toBe(true);
    expect(await store.audit()).toEqual([]);
    await Promise.all(jobs.map((job) => store.cancel(job.id, now).catch(() => undefined)));
    await store.cancel(pending.id, now).catch(() => undefined);
    await store.pruneTerminal(now + 1, RETAIN_NOTHING, 100);
    expect(await store.audit()).toEqual([]);
    expect([tables.jobs.size, tables.counts.size, tables.ready.size, tables.queueNames.size, tables.storedBytes]).toEqual([0, 0, 0, 0, 0]);
  });

  it.each<[string, (t: MemoryTables, jobs: Awaited<ReturnType<typeof busyStore>>) => void, RegExp]>([
    ['a counter off by one', (t) => (t.counts.get('other')!.scheduled += 1), /queue other counts scheduled jobs as 2, but there are 1/],
    ['a size that was not updated', (t, { done }) => (t.jobs.get(done.id)!.bytes += 7), /counted as \d+ bytes but measures \d+/],
    [
      'an active job its worker does not hold',
      (t, { worker, held }) => t.workers.get(worker.workerId)!.held.delete(held.id),
      /which does not hold it/,
    ],
    [
      'a worker holding a job that is not stored',
      (t, { worker }) => t.workers.get(worker.workerId)!.held.add('ghost'),
      /holds job ghost, which is not stored/,
    ],
    [
      'an available job without its ready entry',
      (t, { waiting }) => (t.jobs.get(waiting.id)!.seq = -1),
      /available but has no live entry in the ready queue/,
    ],
    [
      'a scheduled job without its due entry',
      (t, { scheduled }) => (t.jobs.get(scheduled.id)!.seq = -1),
      /scheduled but has no live due entry/,
    ],
    [
      'a finished job that kept its lease',
      (t, { done, held }) => {
        const slot = t.jobs.get(done.id)!;
        slot.job = { ...slot.job, lease: held.lease };
      },
      /cancelled but still has a lease/,
    ],
    ['counters for a queue without jobs', (t) => t.counts.set('ghost', zeroCounts()), /queue ghost has counters but holds no jobs/],
    ['a lease of a worker that is gone', (t, { worker }) => t.workers.delete(worker.workerId), /which is not registered/],
    [
      'a job missing from its listing',
      (t, { scheduled }) => t.listings.delete('scheduled', 'other', t.jobs.get(scheduled.id)!.key),
      /the scheduled listing has 0, but there are 1/,
    ],
    [
      'a listing key of a job in another state',
      (t, { scheduled }) => t.listings.add('pending', 'other', t.jobs.get(scheduled.id)!.key),
      /the pending listing of queue other has .*, which names job .* \(scheduled, queue other\)/,
    ],
    [
      'an available job listed under another run position',
      (t, { waiting }) => (t.jobs.get(waiting.id)!.key = 'other#0000000000000001'),
      /is listed under other#0000000000000001 but its listing key is other#\d{16}/,
    ],
    [
      'a job listed under a stale key',
      (t, { done }) => (t.jobs.get(done.id)!.key = 'stale'),
      /is listed under stale but its listing key is/,
    ],
    [
      'throughput kept for a queue that is gone',
      (t) => t.throughput.count({ at: T0, jobId: 'j', jobType: 't', queue: 'ghost', from: 'active', to: 'completed', attempt: 1 }),
      /queue ghost keeps throughput but holds no jobs and is not paused/,
    ],
    ['a paused queue missing from the queue listing', (t) => t.paused.add('ghost'), /the queue listing has 2 keys for 3 stored/],
    [
      'rate-limit event sampling kept for a queue without limits',
      (t) => t.limiter['sampling'].set('ghost', { quietUntil: T0 }),
      /queue ghost keeps rate-limit event sampling but has no limits/,
    ],
  ])('reports %s', async (_, corrupt, expected) => {
    corrupt(tables, await busyStore());
    expect(await store.audit()).toEqual(expect.arrayContaining([expect.stringMatching(expected)]));
  });

  it('removes a worker whose reservations name jobs it no longer holds', async () => {
    const { worker, held, done } = await busyStore();
    const reservations = tables.workers.get(worker.workerId)!.held;
    reservations.add('ghost');
    reservations.add(done.id);
    expect(await store.audit()).toHaveLength(2);
    const recovery = {
      jobId: held.id,
      leaseToken: held.lease!.token,
      outcome: h.outcome(held, { type: 'worker_death', message: '' }, T0, true),
    };
    expect(await store.removeWorker({ workerId: worker.workerId, reason: 'deregistered', recoveries: [recovery], now: T0 })).toMatchObject({
      removed: true,
      transitions: [expect.objectContaining({ jobId: held.id, to: 'available' })],
    });
    expect(await store.audit()).toEqual([]);
  });

  it('still refuses to remove a worker whose held job the recoveries cover only with an old lease', async () => {
    const { worker, held } = await busyStore();
    const outcome = h.outcome(held, { type: 'worker_death', message: '' }, T0, true);
    const removal = await store.removeWorker({
      workerId: worker.workerId,
      reason: 'deregistered',
      recoveries: [{ jobId: held.id, leaseToken: 'old', outcome }],
      now: T0,
    });
    expect(removal).toEqual({ removed: false, transitions: [] });
    expect(await h.state(held.id)).toBe('active');
  });

  it('forgets a queue entirely once its last job is removed', async () => {
    const queues = Array.from({ length: 50 }, (_, i) => `q-${i}`);
    const jobs = await h.enqueue(...queues.map((queue) => ({ queue })));
    for (const job of jobs) await store.cancel(job.id, T0);
    expect(tables.queueNames.size).toBe(50);
    expect(await store.pruneTerminal(T0 + 1, RETAIN_NOTHING, 100)).toBe(50);
    expect([tables.counts.size, tables.ready.size, tables.queueNames.size]).toEqual([0, 0, 0]);
    expect(await store.listQueues({ limit: 100 })).toEqual({ items: [] });
  });

  it('sweeps index entries that went stale before they outnumber the live ones', async () => {
    const worker = await h.register({ concurrency: 1 });
    const [held] = await h.enqueue({});
    await h.claim(worker.workerId, ['default'], 1);
    for (let beat = 1; beat <= 3_000; beat++) await h.beat(worker.workerId, 'running', [held!.id], beat, T0 + beat);
    const cancelled = await h.enqueue(...Array.from({ length: 3_000 }, (_, i) => ({ scheduledAt: i % 2 === 0 ? undefined : T0 + 1e9 })));
    for (const job of cancelled) await store.cancel(job.id, T0);
    const bound = 2 * 1 + 1_024;
    expect(tables.leases.size).toBeLessThanOrEqual(bound);
    expect(tables.ready.get('default')!.size).toBeLessThanOrEqual(bound);
    expect(tables.due.size).toBeLessThanOrEqual(bound);
    expect(await store.audit()).toEqual([]);
  });
});
