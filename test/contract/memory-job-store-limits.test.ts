import { randomUUID } from 'node:crypto';
import { refusal } from '../support/refusal';
import type { Job } from '../../src/domain/job';
import { MemoryJobStore } from '../../src/store/memory/memory-job-store';
import { storedBytes } from '../../src/store/memory/stored-size';
import { StoreHarness, T0 } from './store-harness';

const RETAIN_NOTHING = { completedMs: 0, cancelledMs: 0, discardedMs: 0, maxJobs: 0 };

describe('the memory store bound', () => {
  let h: StoreHarness;
  let store: MemoryJobStore;

  function start(limits: { maxJobs?: number; maxBytes?: number }): void {
    store = new MemoryJobStore(limits);
    h = new StoreHarness(store);
  }
  afterEach(async () => {
    h.close();
    const problems = await store.audit();
    if (problems.length > 0) throw new Error(`the store audit found:\n${problems.join('\n')}`);
  });

  async function complete(workerId: string, jobs: Job[], result?: string): Promise<void> {
    const claimed = (await h.claim(workerId, ['default'], jobs.length)).jobs;
    const items = claimed.map((job) => ({ jobId: job.id, leaseToken: job.lease!.token, result }));
    expect((await h.store.ack({ workerId, items, now: T0 })).every((outcome) => outcome.ok)).toBe(true);
  }

  it('refuses an enqueue that would pass the job bound, all or none, until retention makes room', async () => {
    start({ maxJobs: 3 });
    const worker = await h.register();
    const first = await h.enqueue({}, {});
    const batch = [h.job(), h.job()];
    const full = await refusal(store.enqueue(batch));
    expect(full).toMatchObject({ code: 'queue_full', retryable: true, metadata: { bound: 'jobs' } });
    expect(full.message).toContain('at most 3 are allowed');
    expect(await store.getJobs(batch.map((job) => job.id))).toEqual([undefined, undefined]);
    await complete(worker.workerId, first);
    await expect(store.enqueue(batch)).rejects.toMatchObject({ code: 'queue_full' });
    expect(await store.pruneTerminal(T0 + 1, RETAIN_NOTHING, 10)).toBe(2);
    await store.enqueue(batch);
    expect((await store.getJobs(batch.map((job) => job.id))).map((job) => job?.state)).toEqual(['available', 'available']);
  });

  it('refuses an enqueue that would pass the byte bound, naming the bound and its limit', async () => {
    const payload = (n: number) => ({ args: ['x'.repeat(n)] });
    const probe = new StoreHarness(new MemoryJobStore()).job(payload(10_000));
    start({ maxBytes: 2 * storedBytes(probe) + 100 });
    await h.enqueue(payload(10_000), payload(10_000));
    const refused = h.job(payload(200));
    const full = await refusal(store.enqueue([refused]));
    expect(full).toMatchObject({ code: 'queue_full', retryable: true, metadata: { bound: 'bytes' } });
    expect(full.message).toContain(`at most ${2 * storedBytes(probe) + 100} are allowed`);
    expect(await store.getJob(refused.id)).toBeUndefined();
  });

  it('counts what jobs gain once stored, but never refuses it', async () => {
    const job = new StoreHarness(new MemoryJobStore()).job();
    start({ maxBytes: storedBytes(job) + 1_000 });
    const worker = await h.register();
    await store.enqueue([job]);
    await complete(worker.workerId, [job], 'r'.repeat(5_000));
    expect(await store.getJob(job.id)).toMatchObject({ state: 'completed', result: 'r'.repeat(5_000) });
    await expect(h.enqueue({})).rejects.toMatchObject({ code: 'queue_full', metadata: { bound: 'bytes' } });
    await store.pruneTerminal(T0 + 1, RETAIN_NOTHING, 10);
    await h.enqueue({});
  });

  it('keeps stored sizes current through progress, failures, retries and removal', async () => {
    start({});
    const worker = await h.register();
    const [job] = await h.enqueue({ args: ['a'], retry: { maxAttempts: 1 } });
    const [claimed] = (await h.claim(worker.workerId, ['default'])).jobs;
    const leaseToken = claimed!.lease!.token;
    await store.recordProgress({ workerId: worker.workerId, jobId: job!.id, leaseToken, checkpoint: 'c'.repeat(3_000), now: T0 });
    expect(await store.audit()).toEqual([]);
    const outcome = h.outcome(claimed!, { type: 'Boom', message: 'm'.repeat(2_000) }, T0);
    await store.fail({ workerId: worker.workerId, items: [{ jobId: job!.id, leaseToken, outcome }], now: T0 });
    expect(await store.audit()).toEqual([]);
    await store.retry(job!.id, T0);
    expect(await store.audit()).toEqual([]);
    await store.cancel(job!.id, T0);
    await store.pruneTerminal(T0 + 1, RETAIN_NOTHING, 10);
    expect(store['tables'].storedBytes).toBe(0);
  });

  it('claims jobs while their sizes sum to at most the budget, exactly', async () => {
    start({});
    const worker = await h.register();
    const jobs = await h.enqueue({ args: ['a'] }, { args: ['bb'] }, { args: ['ccc'] });
    const [a, b] = jobs.map(storedBytes);
    const claim = (maxBytes: number) =>
      store.claim({
        workerId: worker.workerId,
        queues: ['default'],
        max: 10,
        now: T0,
        leaseNonce: randomUUID(),
        confirmWithinMs: 1_000,
        maxBytes,
      });
    expect((await claim(a! + b!)).jobs.map((job) => job.id)).toEqual([jobs[0]!.id, jobs[1]!.id]);
    expect((await claim(0)).jobs.map((job) => job.id)).toEqual([jobs[2]!.id]);
  });

  it('takes batches of tens of thousands of jobs in one call', async () => {
    start({});
    const count = 20_000;
    const worker = await h.register({ concurrency: count });
    const jobs = Array.from({ length: count }, () => h.job());
    await store.enqueue(jobs);
    const params = { workerId: worker.workerId, queues: ['default'], max: count, now: T0, leaseNonce: 'n', confirmWithinMs: 1_000 };
    const claimed = (await store.claim({ ...params, maxBytes: Number.MAX_SAFE_INTEGER })).jobs;
    expect(claimed).toHaveLength(count);
    const outcomes = await store.ack({
      workerId: worker.workerId,
      items: claimed.map((job) => ({ jobId: job.id, leaseToken: job.lease!.token })),
      now: T0,
    });
    expect(outcomes.filter((outcome) => outcome.ok)).toHaveLength(count);
    expect(await store.pruneTerminal(T0 + 1, RETAIN_NOTHING, count)).toBe(count);
  });
});
