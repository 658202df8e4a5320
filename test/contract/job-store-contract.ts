import { randomUUID } from 'node:crypto';
import { refusal } from '../support/refusal';
import { OjsError } from '../../src/domain/errors';
import { compareCursors, isCursor, type HeartbeatNotice, type RecordedFact } from '../../src/domain/event-facts';
import type { Job, JobState } from '../../src/domain/job';
import { JOB_SCAN_BUDGET, type JobFilter, type JobQuery, type ListOrder } from '../../src/domain/job-query';
import type { JobSubmission } from '../../src/domain/job-submission';
import { DELIVERY_BUDGET_BYTES } from '../../src/domain/limits';
import { DEFAULT_EVENT_RETENTION, type EventRetention } from '../../src/domain/retention';
import type { JobStore } from '../../src/store/job-store';
import { afterReport } from '../../src/domain/worker';
import { factFollower } from '../support/fact-follower';
import { Progress } from '../support/waiting';
import { StoreHarness, T0, VISIBILITY_MS } from './store-harness';

/** What a test may ask of a store beyond the defaults. */
export interface StoreOptions {
  events?: EventRetention;
}

export interface StoreFactory {
  /** A fresh, empty store. */
  create(options?: StoreOptions): Promise<JobStore>;
}

/** Orders rows as Array#sort does by default: by their comma-joined text. */
function byText(a: readonly string[], b: readonly string[]): number {
  const [x, y] = [a.join(), b.join()];
  return x < y ? -1 : x > y ? 1 : 0;
}

/**
 * The behaviour every JobStore must have. It runs unchanged against each
 * implementation; time is always passed in, so nothing here waits.
 */
export function describeJobStoreContract(name: string, factory: StoreFactory): void {
  describe(`${name} store contract`, () => {
    let h: StoreHarness;

    beforeEach(async () => {
      h = new StoreHarness(await factory.create());
    });
    afterEach(async () => {
      h.close();
      // Whatever a test did, the stored data keeps every invariant the store's audit checks.
      const problems = await h.store.audit();
      await h.store.close();
      if (problems.length > 0) throw new Error(`the store audit found:\n${problems.join('\n')}`);
    });

    describe('enqueue', () => {
      it('stores jobs and returns them by id', async () => {
        const [job] = await h.enqueue({ args: ['a', 1, { b: [true, null] }], meta: { tenant: 't1' } });
        expect(await h.store.getJob(job!.id)).toEqual(job);
        expect(await h.store.getJobs([job!.id, 'missing'])).toEqual([job, undefined]);
      });

      it('refuses a batch containing a taken id and stores none of it', async () => {
        const [taken] = await h.enqueue({});
        const fresh = h.job();
        const error = await refusal(h.store.enqueue([fresh, { ...h.job(), id: taken!.id }]));
        expect(error.code).toBe('duplicate');
        expect(await h.store.getJob(fresh.id)).toBeUndefined();
      });

      it('signals how many jobs became available per queue', async () => {
        await h.enqueue({ queue: 'q1' }, { queue: 'q1' }, { queue: 'q2' });
        await h.waitForSignal('jobsAvailable', (s) => s.queue === 'q2');
        const counts = new Map<string, number>();
        for (const s of h.signalsOf('jobsAvailable')) counts.set(s.queue, (counts.get(s.queue) ?? 0) + s.count);
        expect(Object.fromEntries(counts)).toEqual({ q1: 2, q2: 1 });
      });
    });

    describe('unique jobs', () => {
      const unique = (onConflict: string, extra: Record<string, unknown> = {}): Partial<JobSubmission> => ({
        type: 'mail.send',
        args: [{ user: 42 }],
        unique: { keys: ['type', 'args'], onConflict, ...extra },
      });

      it('refuses a duplicate under reject, naming the job that holds the key, and stores none of the batch', async () => {
        const [first] = await h.enqueue(unique('reject'));
        const fresh = h.job();
        const error = await refusal(h.store.enqueue([fresh, h.job(unique('reject'))]));
        expect(error.code).toBe('duplicate');
        expect(error.metadata).toMatchObject({ field: 'jobs[1].unique', existing_job_id: first!.id, existing_job_state: 'available' });
        expect(await h.store.getJob(fresh.id)).toBeUndefined();
      });

      it('returns the existing job under ignore, for a stored job and for an earlier job of the same batch', async () => {
        const [first] = await h.enqueue(unique('ignore'));
        const again = await h.store.enqueue([h.job(unique('ignore'))]);
        expect(again).toEqual([{ job: first, deduplicated: true }]);
        const other = { ...unique('ignore'), args: [{ user: 7 }] };
        const [a, b] = [h.job(other), h.job(other)];
        const outcomes = await h.store.enqueue([a, b]);
        expect(outcomes.map((o) => [o.job.id, o.deduplicated])).toEqual([
          [a.id, false],
          [a.id, true],
        ]);
        expect(await h.store.getJob(b.id)).toBeUndefined();
      });

      it('cancels the existing job under replace and gives the key to the new one', async () => {
        const [first] = await h.enqueue(unique('replace'));
        const next = h.job(unique('replace'));
        const [outcome] = await h.store.enqueue([next]);
        expect(outcome).toMatchObject({ job: next, deduplicated: false, replaced: { jobId: first!.id, to: 'cancelled' } });
        expect((await h.store.getJob(first!.id))?.state).toBe('cancelled');
        const error = await refusal(h.store.enqueue([h.job(unique('reject'))]));
        expect(error.metadata['existing_job_id']).toBe(next.id);
      });

      it('releases the key when the job leaves the counted states, and keeps it in a counted terminal state', async () => {
        const [first] = await h.enqueue(unique('reject'));
        await h.store.cancel(first!.id, T0);
        const [second] = await h.store.enqueue([h.job(unique('reject'))]);
        expect(second?.deduplicated).toBe(false);
        const kept = { ...unique('ignore', { states: ['available', 'cancelled'] }), type: 'mail.other' };
        const [held] = await h.enqueue(kept);
        await h.store.cancel(held!.id, T0);
        const [again] = await h.store.enqueue([h.job(kept)]);
        expect(again).toMatchObject({ job: { id: held!.id, state: 'cancelled' }, deduplicated: true });
      });

      it('lets a duplicate in once the period from the existing job creation has passed', async () => {
        await h.enqueue(unique('reject', { period: 'PT1M' }));
        await expect(h.store.enqueue([h.job(unique('reject', { period: 'PT1M' }), { now: T0 + 59_999 })])).rejects.toThrow(OjsError);
        const [later] = await h.store.enqueue([h.job(unique('reject', { period: 'PT1M' }), { now: T0 + 60_000 })]);
        expect(later?.deduplicated).toBe(false);
      });

      it('keys by the chosen dimensions only: other queues and other args keys are duplicates unless chosen', async () => {
        const byUser = (queue: string, template: string): Partial<JobSubmission> => ({
          type: 'mail.send',
          queue,
          args: [{ user: 1, template }],
          unique: { keys: ['args'], argsKeys: ['user'], onConflict: 'ignore' },
        });
        const [first] = await h.enqueue(byUser('q1', 'welcome'));
        const [same] = await h.store.enqueue([h.job(byUser('q2', 'reminder'))]);
        expect(same).toEqual({ job: first, deduplicated: true });
        const scoped = { ...byUser('q2', 'x'), unique: { keys: ['queue'], onConflict: 'reject' } };
        await h.enqueue(scoped);
        expect((await h.store.enqueue([h.job({ ...scoped, queue: 'q3' })]))[0]?.deduplicated).toBe(false);
      });
    });

    describe('claim', () => {
      it('takes queues in the order given, then higher priority first, then FIFO', async () => {
        const worker = await h.register({ queues: ['low', 'high'] });
        const [l1, h1, h2, h3, l2] = await h.enqueue(
          { queue: 'low' },
          { queue: 'high', priority: 0 },
          { queue: 'high', priority: 5 },
          { queue: 'high', priority: 0 },
          { queue: 'low', priority: -1 },
        );
        const { jobs } = await h.claim(worker.workerId, ['high', 'low'], 10);
        expect(jobs.map((j) => j.id)).toEqual([h2, h1, h3, l1, l2].map((j) => j!.id));
      });

      it('names the queues it found with no job ready: not one whose jobs its limit, a paused queue or its limits kept', async () => {
        const worker = await h.register({ queues: ['emptied', 'empty', 'more', 'paused', 'limited'], concurrency: 100 });
        await h.store.setQueuePaused({ queue: 'paused', paused: true, now: T0, actor: 'ops' });
        await h.store.setQueueLimits({ queue: 'limited', limits: { maxActive: 1 }, now: T0 });
        await h.enqueue({ queue: 'emptied' }, { queue: 'paused' }, { queue: 'limited' }, { queue: 'limited' });
        const first = await h.claim(worker.workerId, ['emptied', 'empty', 'paused', 'limited'], 10);
        expect(first.jobs).toHaveLength(2);
        expect(first.drainedQueues.toSorted()).toEqual(['emptied', 'empty']);
        await h.enqueue({ queue: 'more' }, { queue: 'more' });
        // Stopped by the claim's max with a job left.
        expect((await h.claim(worker.workerId, ['more'], 1)).drainedQueues).toEqual([]);
        expect((await h.claim(worker.workerId, ['more'], 10)).drainedQueues).toEqual(['more']);
      });

      it('makes claimed jobs active with an attempt, a start time and a lease of the worker', async () => {
        const worker = await h.register();
        const [job] = await h.enqueue({});
        const { jobs, isRunning } = await h.claim(worker.workerId, ['default'], 1, T0 + 5);
        expect(isRunning).toBe(true);
        expect(jobs[0]).toMatchObject({
          id: job!.id,
          state: 'active',
          attempt: 1,
          startedAt: T0 + 5,
          lease: { workerId: worker.workerId, expiresAt: T0 + 5 + VISIBILITY_MS, isConfirmed: false },
        });
        expect(jobs[0]!.lease!.token).not.toBe('');
        expect(await h.state(job!.id)).toBe('active');
      });

      it('hands back the args, meta and checkpoint of a claimed job as stored, separators and control characters included', async () => {
        const worker = await h.register();
        // The Redis store's scripts join the fields of facts and claimed jobs with \x1f and facts with \x1e.
        const args = ['\x1f\x1e\n\u0000', { '\x1f': 'é日🙂' }, [1.5, null, true, '']];
        const meta = { note: '\x1f|\x1e', empty: '' };
        const [job] = await h.enqueue({ args, meta });
        const first = await h.claim(worker.workerId, ['default'], 1);
        expect(first.jobs[0]).toMatchObject({ id: job!.id, args, meta });
        const checkpoint = { cursor: '\x1f', at: [0, '\x1e'] };
        const lease = { workerId: worker.workerId, jobId: job!.id, leaseToken: first.jobs[0]!.lease!.token };
        await h.store.recordProgress({ ...lease, checkpoint, now: T0 + 1 });
        const outcome = h.outcome(first.jobs[0]!, { type: 'Boom', message: '\x1f\x1e' }, T0 + 2, true);
        await h.store.fail({ workerId: worker.workerId, items: [{ ...lease, outcome }], now: T0 + 2 });
        const second = await h.claim(worker.workerId, ['default'], 1, T0 + 3);
        expect(second.jobs[0]).toMatchObject({
          id: job!.id,
          attempt: 2,
          args,
          meta,
          lastCheckpoint: checkpoint,
          error: { message: '\x1f\x1e' },
          errors: [{ message: '\x1f\x1e' }],
        });
      });

      it('never reserves more than the worker concurrency', async () => {
        const worker = await h.register({ concurrency: 2 });
        await h.enqueue({}, {}, {}, {});
        const first = await h.claim(worker.workerId, ['default'], 10);
        expect(first.jobs).toHaveLength(2);
        expect(first.freeCapacity).toBe(0);
        expect((await h.claim(worker.workerId, ['default'], 10)).jobs).toHaveLength(0);
      });

      it('never hands the same job to two concurrent claims', async () => {
        const workers = await Promise.all(Array.from({ length: 8 }, () => h.register({ concurrency: 50 })));
        const jobs = await h.enqueue(...Array.from({ length: 200 }, () => ({})));
        const results = await Promise.all(
          workers.flatMap((w) => [h.claim(w.workerId, ['default'], 15), h.claim(w.workerId, ['default'], 15)]),
        );
        const claimed = results.flatMap((r) => r.jobs.map((j) => j.id));
        expect(new Set(claimed).size).toBe(claimed.length);
        expect(claimed.length).toBe(Math.min(jobs.length, 8 * 30));
      });

      it('claims nothing for a worker that is not running', async () => {
        const worker = await h.register();
        await h.enqueue({});
        await h.direct(worker.workerId, 'quiet');
        expect(await h.claim(worker.workerId, ['default'])).toMatchObject({ isRunning: false, jobs: [] });
      });

      it('refuses an unknown worker', async () => {
        expect((await refusal(h.claim('nobody', ['default']))).code).toBe('not_found');
      });

      it('never claims a job past its waiting deadline, which the expiry pass then discards', async () => {
        const worker = await h.register();
        const [expired, stale, fresh] = await h.enqueue({ expiresAt: T0 + 10 }, { enqueueTtlSeconds: 1 }, {});
        const { jobs } = await h.claim(worker.workerId, ['default'], 10, T0 + 1_000);
        expect(jobs.map((j) => j.id)).toEqual([fresh!.id]);
        expect(await h.expireWaiting(T0 + 1_000)).toEqual(
          expect.arrayContaining([
            expect.objectContaining({ jobId: expired!.id, to: 'discarded' }),
            expect.objectContaining({ jobId: stale!.id, to: 'discarded' }),
          ]),
        );
        expect(await h.store.getJob(expired!.id)).toMatchObject({ state: 'discarded', error: { type: 'expired' } });
        expect(await h.store.getJob(stale!.id)).toMatchObject({ state: 'discarded', error: { type: 'enqueue_ttl_expired' } });
      });

      it('gives a new lease only the confirmation window until the worker confirms it', async () => {
        const worker = await h.register();
        await h.enqueue({});
        const [claimed] = (await h.claim(worker.workerId, ['default'], 1, T0, 3_000)).jobs;
        expect(claimed!.lease).toMatchObject({ expiresAt: T0 + 3_000, isConfirmed: false });
        await h.beat(worker.workerId, 'running', [claimed!.id], 1, T0 + 1_000);
        expect((await h.store.getJob(claimed!.id))!.lease).toMatchObject({ expiresAt: T0 + 1_000 + VISIBILITY_MS, isConfirmed: true });
      });

      it('releases a lapsed unconfirmed delivery only if its worker beat since the claim', async () => {
        const worker = await h.register();
        await h.enqueue({});
        const [claimed] = (await h.claim(worker.workerId, ['default'], 1, T0, 3_000)).jobs;
        const leases = [{ jobId: claimed!.id, leaseToken: claimed!.lease!.token }];
        const release = (now: number) => h.store.releaseUndelivered({ leases, now, requireUnconfirmedLapse: true });
        expect(await release(T0 + 2_999)).toEqual([]);
        expect(await release(T0 + 3_000)).toEqual([]);
        await h.beat(worker.workerId, 'running', [], 1, T0 + 1_000);
        expect(await release(T0 + 3_000)).toEqual([expect.objectContaining({ jobId: claimed!.id, to: 'available' })]);
        expect(await h.store.getJob(claimed!.id)).toMatchObject({ state: 'available', attempt: 0, errors: [] });
      });

      it('never releases a confirmed delivery as undelivered', async () => {
        const worker = await h.register();
        await h.enqueue({});
        const [claimed] = (await h.claim(worker.workerId, ['default'], 1, T0, 3_000)).jobs;
        await h.beat(worker.workerId, 'running', [claimed!.id], 1, T0 + 1);
        const leases = [{ jobId: claimed!.id, leaseToken: claimed!.lease!.token }];
        expect(await h.store.releaseUndelivered({ leases, now: T0 + 10 * VISIBILITY_MS, requireUnconfirmedLapse: true })).toEqual([]);
      });

      it('stops before the byte budget would be passed, always taking a first job, and leaves the rest first in line', async () => {
        const worker = await h.register({ queues: ['default', 'other'] });
        const big = (tag: string) => ({ args: [tag, 'x'.repeat(300_000)] });
        const [a, b, c] = await h.enqueue(big('a'), big('b'), big('c'));
        const [small] = await h.enqueue({ queue: 'other' });
        const claim = (maxBytes: number) =>
          h.store.claim({
            workerId: worker.workerId,
            queues: ['default', 'other'],
            max: 10,
            now: T0,
            leaseNonce: randomUUID(),
            confirmWithinMs: 3_000,
            maxBytes,
          });
        expect((await claim(700_000)).jobs.map((j) => j.id)).toEqual([a!.id, b!.id]);
        expect((await claim(1)).jobs.map((j) => j.id)).toEqual([c!.id]);
        expect((await claim(1)).jobs.map((j) => j.id)).toEqual([small!.id]);
      });

      it('undoes the claim of jobs that could not be delivered', async () => {
        const worker = await h.register({ concurrency: 1 });
        const [job] = await h.enqueue({});
        const { jobs } = await h.claim(worker.workerId, ['default']);
        const released = await h.store.releaseUndelivered({
          leases: [{ jobId: job!.id, leaseToken: jobs[0]!.lease!.token }],
          now: T0,
          requireUnconfirmedLapse: false,
        });
        expect(released).toEqual([expect.objectContaining({ jobId: job!.id, from: 'active', to: 'available', workerId: worker.workerId })]);
        const stored = await h.store.getJob(job!.id);
        expect(stored).toMatchObject({ state: 'available', attempt: 0 });
        expect(stored!.lease).toBeUndefined();
        expect((await h.claim(worker.workerId, ['default'])).jobs.map((j) => j.id)).toEqual([job!.id]);
      });
    });

    describe('ack and fail', () => {
      it('completes a held job with its result and frees capacity', async () => {
        const worker = await h.register({ concurrency: 1 });
        await h.enqueue({});
        const [claimed] = (await h.claim(worker.workerId, ['default'])).jobs;
        const [outcome] = await h.store.ack({
          workerId: worker.workerId,
          items: [{ jobId: claimed!.id, leaseToken: claimed!.lease!.token, result: { sent: 3 } }],
          now: T0 + 7,
        });
        expect(outcome).toMatchObject({
          ok: true,
          transition: { jobId: claimed!.id, from: 'active', to: 'completed', workerId: worker.workerId, attempt: 1 },
        });
        const completed = await h.store.getJob(claimed!.id);
        expect(completed).toMatchObject({ state: 'completed', completedAt: T0 + 7, result: { sent: 3 } });
        expect(completed!.lease).toBeUndefined();
        await h.waitForSignal('capacityFreed', (s) => s.workerId === worker.workerId);
        expect((await h.store.getWorker(worker.workerId))!.heldJobIds).toEqual([]);
      });

      it('refuses settlement by another worker, with a stale token, or of a job that is not active', async () => {
        const [owner, other] = [await h.register(), await h.register()];
        await h.enqueue({});
        const [claimed] = (await h.claim(owner.workerId, ['default'])).jobs;
        const token = claimed!.lease!.token;
        const attempts = await h.store.ack({
          workerId: other.workerId,
          items: [
            { jobId: claimed!.id, leaseToken: token },
            { jobId: 'missing', leaseToken: token },
          ],
          now: T0,
        });
        expect(attempts.map((a) => (a.ok ? 'ok' : (a.error as OjsError).code))).toEqual(['invalid_state', 'not_found']);
        const [stale] = await h.store.ack({ workerId: owner.workerId, items: [{ jobId: claimed!.id, leaseToken: `${token}x` }], now: T0 });
        expect(stale).toMatchObject({ ok: false, error: { metadata: { lease_problem: 'stale_lease' } } });
        await h.store.ack({ workerId: owner.workerId, items: [{ jobId: claimed!.id, leaseToken: token }], now: T0 });
        const [again] = await h.store.ack({ workerId: owner.workerId, items: [{ jobId: claimed!.id, leaseToken: token }], now: T0 });
        expect(again).toMatchObject({ ok: false, error: { metadata: { lease_problem: 'not_active' } } });
      });

      it('applies a retry outcome, then makes the job available when its backoff elapses', async () => {
        const worker = await h.register();
        await h.enqueue({});
        const [claimed] = (await h.claim(worker.workerId, ['default'])).jobs;
        const outcome = h.outcome(claimed!, { type: 'Boom', message: 'no' }, T0 + 10);
        const [failed] = await h.store.fail({
          workerId: worker.workerId,
          items: [{ jobId: claimed!.id, leaseToken: claimed!.lease!.token, outcome }],
          now: T0 + 10,
        });
        expect(failed).toMatchObject({ ok: true, nextRetryAt: T0 + 1_010, transition: { from: 'active', to: 'retryable' } });
        expect(await h.store.getJob(claimed!.id)).toMatchObject({
          state: 'retryable',
          nextRetryAt: T0 + 1_010,
          error: { type: 'Boom', attempt: 1 },
          errors: [{ type: 'Boom' }],
        });
        expect(await h.store.promoteDue(T0 + 1_009, 100)).toEqual({ transitions: [], nextDueAt: T0 + 1_010 });
        expect(await h.store.promoteDue(T0 + 1_010, 100)).toEqual({
          transitions: [expect.objectContaining({ jobId: claimed!.id, from: 'retryable', to: 'available' })],
          nextDueAt: undefined,
        });
        const [second] = (await h.claim(worker.workerId, ['default'], 1, T0 + 2_000)).jobs;
        expect(second).toMatchObject({ id: claimed!.id, attempt: 2, errors: [{ type: 'Boom' }] });
      });

      it('applies a discard outcome with the dead letter mark', async () => {
        const worker = await h.register();
        await h.enqueue({ retry: { maxAttempts: 1, onExhaustion: 'dead_letter' } });
        const [claimed] = (await h.claim(worker.workerId, ['default'])).jobs;
        const outcome = h.outcome(claimed!, { type: 'Boom', message: '' }, T0);
        const [failed] = await h.store.fail({
          workerId: worker.workerId,
          items: [{ jobId: claimed!.id, leaseToken: claimed!.lease!.token, outcome }],
          now: T0,
        });
        expect(failed).toMatchObject({ ok: true, transition: { to: 'discarded' } });
        expect(await h.store.getJob(claimed!.id)).toMatchObject({ state: 'discarded', deadLetter: true, completedAt: T0 });
      });

      it('extends a held lease from now, and refuses a stale token', async () => {
        const worker = await h.register();
        await h.enqueue({});
        const [claimed] = (await h.claim(worker.workerId, ['default'])).jobs;
        const params = { workerId: worker.workerId, jobId: claimed!.id, leaseToken: claimed!.lease!.token, now: T0 + 30_000 };
        expect(await h.store.extendLease(params)).toBe(T0 + 30_000 + VISIBILITY_MS);
        expect((await refusal(h.store.extendLease({ ...params, leaseToken: 'old' }))).code).toBe('invalid_state');
      });
    });

    describe('manual transitions', () => {
      it('cancels waiting jobs, is idempotent on cancelled ones, and refuses finished ones', async () => {
        const [available, scheduled] = await h.enqueue({}, { scheduledAt: T0 + 60_000 });
        const [pending] = [h.job({}, { pending: true })];
        await h.store.enqueue([pending]);
        for (const job of [available!, scheduled!, pending]) {
          expect((await h.store.cancel(job.id, T0 + 1)).job).toMatchObject({ state: 'cancelled', completedAt: T0 + 1 });
        }
        expect((await h.store.cancel(available!.id, T0 + 2)).job.state).toBe('cancelled');
        const worker = await h.register();
        await h.enqueue({});
        const [claimed] = (await h.claim(worker.workerId, ['default'])).jobs;
        await h.store.ack({ workerId: worker.workerId, items: [{ jobId: claimed!.id, leaseToken: claimed!.lease!.token }], now: T0 });
        expect((await refusal(h.store.cancel(claimed!.id, T0))).code).toBe('invalid_state');
        expect((await refusal(h.store.cancel('missing', T0))).code).toBe('not_found');
      });

      it('cancels an active job, frees the worker and tells it', async () => {
        const worker = await h.register();
        await h.enqueue({});
        const [claimed] = (await h.claim(worker.workerId, ['default'])).jobs;
        const change = await h.store.cancel(claimed!.id, T0);
        expect(change).toMatchObject({ from: 'active', workerId: worker.workerId, job: { state: 'cancelled' } });
        expect(await h.waitForSignal('jobsCancelled', (s) => s.workerId === worker.workerId)).toMatchObject({ jobIds: [claimed!.id] });
        expect((await h.store.getWorker(worker.workerId))!.heldJobIds).toEqual([]);
        const [late] = await h.store.ack({
          workerId: worker.workerId,
          items: [{ jobId: claimed!.id, leaseToken: claimed!.lease!.token }],
          now: T0,
        });
        expect(late).toMatchObject({ ok: false, error: { code: 'invalid_state' } });
      });

      it('activates only pending jobs', async () => {
        const pending = h.job({}, { pending: true });
        const [available] = await h.enqueue({});
        await h.store.enqueue([pending]);
        expect(await h.store.activate(pending.id, T0 + 3)).toMatchObject({
          from: 'pending',
          job: { state: 'available', enqueuedAt: T0 + 3 },
        });
        expect((await refusal(h.store.activate(available!.id, T0))).code).toBe('invalid_state');
      });

      it('retries only discarded jobs, resetting attempts and errors', async () => {
        const worker = await h.register();
        const [job] = await h.enqueue({ retry: { maxAttempts: 1 } });
        expect((await refusal(h.store.retry(job!.id, T0))).code).toBe('invalid_state');
        const [claimed] = (await h.claim(worker.workerId, ['default'])).jobs;
        const outcome = h.outcome(claimed!, { type: 'Boom', message: '' }, T0);
        await h.store.fail({ workerId: worker.workerId, items: [{ jobId: job!.id, leaseToken: claimed!.lease!.token, outcome }], now: T0 });
        const retried = await h.store.retry(job!.id, T0 + 5);
        expect(retried).toMatchObject({ from: 'discarded', job: { state: 'available', attempt: 0, errors: [] } });
        expect(retried.job.error).toBeUndefined();
      });
    });

    describe('time-driven changes', () => {
      it('promotes scheduled jobs when their time comes', async () => {
        const [job] = await h.enqueue({ scheduledAt: T0 + 1_000 });
        expect(await h.store.promoteDue(T0 + 999, 100)).toEqual({ transitions: [], nextDueAt: T0 + 1_000 });
        expect(await h.store.promoteDue(T0 + 1_000, 100)).toEqual({
          transitions: [expect.objectContaining({ jobId: job!.id, from: 'scheduled', to: 'available' })],
          nextDueAt: undefined,
        });
        expect(await h.store.getJob(job!.id)).toMatchObject({ state: 'available', enqueuedAt: T0 + 1_000 });
      });

      it('tells when the next job falls due: already, after a pass that stopped at its limit', async () => {
        await h.enqueue({ scheduledAt: T0 + 1_000 }, { scheduledAt: T0 + 2_000 }, { scheduledAt: T0 + 3_000 });
        expect(await h.store.promoteDue(T0 + 2_500, 1)).toMatchObject({ transitions: [{ to: 'available' }], nextDueAt: T0 + 2_000 });
        expect(await h.store.promoteDue(T0 + 2_500, 10)).toMatchObject({ transitions: [{ to: 'available' }], nextDueAt: T0 + 3_000 });
      });

      it('announces a job that comes to wait for a time before every other, and no other', async () => {
        const worker = await h.register();
        await h.enqueue({ scheduledAt: T0 + 2_000 });
        await h.enqueue({ scheduledAt: T0 + 3_000 });
        const [failing] = await h.enqueue({});
        const [claimed] = (await h.claim(worker.workerId, ['default'], 1)).jobs;
        const outcome = h.outcome(claimed!, { type: 'Boom', message: 'no' }, T0 + 10);
        await h.store.fail({
          workerId: worker.workerId,
          items: [{ jobId: failing!.id, leaseToken: claimed!.lease!.token, outcome }],
          now: T0 + 10,
        });
        const retryAt = outcome.state === 'retryable' ? outcome.nextRetryAt : Number.NaN;
        expect(retryAt).toBeLessThan(T0 + 2_000);
        // Signals keep their order: once the retry's has come, any for the later job would have come before it.
        await h.waitForSignal('dueAt', (s) => s.at === retryAt);
        expect(h.signalsOf('dueAt').map((s) => s.at)).toEqual([T0 + 2_000, retryAt]);
      });

      it('discards waiting jobs whose expires_at passed, once', async () => {
        const [scheduled, available, later] = await h.enqueue(
          { scheduledAt: T0 + 5_000, expiresAt: T0 + 1_000 },
          { expiresAt: T0 + 1_000 },
          { expiresAt: T0 + 1_001 },
        );
        expect(await h.store.findExpiredWaiting(T0 + 999, 100)).toEqual([]);
        const transitions = await h.expireWaiting(T0 + 1_000);
        expect(transitions.map((t) => [t.jobId, t.from, t.to]).toSorted(byText)).toEqual(
          [
            [scheduled!.id, 'scheduled', 'discarded'],
            [available!.id, 'available', 'discarded'],
          ].toSorted(byText),
        );
        expect(await h.expireWaiting(T0 + 1_000)).toEqual([]);
        expect(await h.state(later!.id)).toBe('available');
        expect((await h.store.promoteDue(T0 + 5_000, 100)).transitions).toEqual([]);
      });

      it('discards a waiting job only in the state it was found in', async () => {
        const [job] = await h.enqueue({ expiresAt: T0 + 1_000 });
        const [found] = await h.store.findExpiredWaiting(T0 + 1_000, 10);
        await h.store.cancel(job!.id, T0 + 1_000);
        const error = { type: 'expired', message: '', backtrace: [], attempt: 0, occurredAt: T0 + 1_000 };
        const items = [{ jobId: found!.id, expectedState: found!.state, error, errors: [error] }];
        expect(await h.store.discardWaiting({ items, now: T0 + 1_000 })).toEqual([]);
        expect(await h.state(job!.id)).toBe('cancelled');
        expect(await h.store.findExpiredWaiting(T0 + 1_000, 10)).toEqual([]);
      });

      it('applies the enqueue TTL before the first attempt only, and the total timeout always', async () => {
        const worker = await h.register();
        const [ttl, total] = await h.enqueue({ enqueueTtlSeconds: 10 }, { totalTimeoutSeconds: 120, timeoutSeconds: 60 });
        const claimed = (await h.claim(worker.workerId, ['default'], 10, T0 + 1_000)).jobs;
        const failed = claimed.map((job) => ({
          jobId: job.id,
          leaseToken: job.lease!.token,
          outcome: h.outcome(job, { type: 'boom', message: '' }, T0 + 2_000),
        }));
        await h.store.fail({ workerId: worker.workerId, items: failed, now: T0 + 2_000 });
        expect(await h.store.findExpiredWaiting(T0 + 60_000, 10)).toEqual([]);
        const [expired] = await h.store.findExpiredWaiting(T0 + 120_000, 10);
        expect(expired!.id).toBe(total!.id);
        expect(await h.state(ttl!.id)).toBe('retryable');
        expect(await h.expireWaiting(T0 + 120_000)).toEqual([
          expect.objectContaining({ jobId: total!.id, from: 'retryable', to: 'discarded' }),
        ]);
        expect(await h.store.getJob(total!.id)).toMatchObject({
          error: { type: 'total_timeout', details: { timeout_kind: 'total', limit_seconds: 120 } },
        });
      });

      it('finds expired leases and recovers each exactly once', async () => {
        const worker = await h.register();
        await h.enqueue({});
        const [claimed] = (await h.claim(worker.workerId, ['default'])).jobs;
        expect(await h.store.findExpiredLeases(T0 + VISIBILITY_MS - 1, 10)).toEqual([]);
        const [expired] = await h.store.findExpiredLeases(T0 + VISIBILITY_MS, 10);
        expect(expired!.id).toBe(claimed!.id);
        const item = {
          jobId: claimed!.id,
          leaseToken: claimed!.lease!.token,
          requireExpired: true,
          outcome: h.outcome(expired!, { type: 'visibility_timeout', message: '' }, T0 + VISIBILITY_MS),
        };
        const now = T0 + VISIBILITY_MS;
        expect(await h.store.recover({ items: [item], now })).toEqual([
          expect.objectContaining({ to: 'retryable', workerId: worker.workerId }),
        ]);
        expect(await h.store.recover({ items: [item], now })).toEqual([]);
        expect(await h.store.findExpiredLeases(now, 10)).toEqual([]);
      });

      it('does not recover a lease that was renewed after it was found', async () => {
        const worker = await h.register();
        await h.enqueue({});
        const [claimed] = (await h.claim(worker.workerId, ['default'])).jobs;
        const now = T0 + VISIBILITY_MS;
        const [expired] = await h.store.findExpiredLeases(now, 10);
        await h.beat(worker.workerId, 'running', [claimed!.id], 1, now);
        const outcome = h.outcome(expired!, { type: 'visibility_timeout', message: '' }, now);
        expect(
          await h.store.recover({ items: [{ jobId: claimed!.id, leaseToken: claimed!.lease!.token, requireExpired: true, outcome }], now }),
        ).toEqual([]);
        expect(await h.state(claimed!.id)).toBe('active');
      });
    });

    describe('timeouts and progress', () => {
      it('leases an attempt until the earliest of its deadlines', async () => {
        const worker = await h.register();
        const [short, silent] = await h.enqueue({ timeoutSeconds: 10, gracePeriodSeconds: 5 }, { heartbeatTimeoutSeconds: 20 });
        const claimed = (await h.claim(worker.workerId, ['default'])).jobs;
        const expiry = Object.fromEntries(claimed.map((job) => [job.id, job.lease!.expiresAt]));
        expect(expiry).toEqual({ [short!.id]: T0 + 15_000, [silent!.id]: T0 + 20_000 });
        await h.beat(worker.workerId, 'running', [short!.id, silent!.id], 1, T0 + 8_000);
        const renewed = await h.store.getJobs([short!.id, silent!.id]);
        expect(renewed.map((job) => job!.lease!.expiresAt)).toEqual([T0 + 15_000, T0 + 28_000]);
        expect((await h.store.findExpiredLeases(T0 + 15_000, 10)).map((job) => job.id)).toEqual([short!.id]);
      });

      it('takes each soft timeout once, when the execution timeout passes', async () => {
        const worker = await h.register();
        const [slow, quick] = await h.enqueue({ timeoutSeconds: 10 }, { timeoutSeconds: 10 });
        const claimed = (await h.claim(worker.workerId, ['default'])).jobs;
        const quickJob = claimed.find((job) => job.id === quick!.id)!;
        await h.store.ack({
          workerId: worker.workerId,
          items: [{ jobId: quickJob.id, leaseToken: quickJob.lease!.token }],
          now: T0 + 1_000,
        });
        expect(await h.store.takeDueSoftTimeouts(T0 + 9_999, 10)).toEqual([]);
        expect(await h.store.takeDueSoftTimeouts(T0 + 10_000, 10)).toEqual([{ jobId: slow!.id, workerId: worker.workerId }]);
        expect(await h.store.takeDueSoftTimeouts(T0 + 20_000, 10)).toEqual([]);
      });

      it('signals the total timeout as a soft timeout when it comes before the execution timeout', async () => {
        const worker = await h.register();
        const [job] = await h.enqueue({ timeoutSeconds: 60, totalTimeoutSeconds: 70 });
        await h.claim(worker.workerId, ['default'], 1, T0 + 30_000);
        expect(await h.store.takeDueSoftTimeouts(T0 + 69_999, 10)).toEqual([]);
        expect(await h.store.takeDueSoftTimeouts(T0 + 70_000, 10)).toEqual([{ jobId: job!.id, workerId: worker.workerId }]);
      });

      it('tells a beating worker which listed jobs to stop: past their timeout, or taken from it', async () => {
        const worker = await h.register();
        const [late, reclaimed, done] = await h.enqueue({ timeoutSeconds: 10 }, {}, {});
        const claimed = new Map((await h.claim(worker.workerId, ['default'])).jobs.map((job) => [job.id, job]));
        const token = (id: string): string => claimed.get(id)!.lease!.token;
        const outcome = h.outcome(claimed.get(reclaimed!.id)!, { type: 'visibility_timeout', message: '' }, T0 + 1_000);
        await h.store.recover({
          items: [{ jobId: reclaimed!.id, leaseToken: token(reclaimed!.id), outcome, requireExpired: false }],
          now: T0 + 1_000,
        });
        await h.store.ack({ workerId: worker.workerId, items: [{ jobId: done!.id, leaseToken: token(done!.id) }], now: T0 + 1_000 });
        const early = await h.beat(worker.workerId, 'running', [late!.id, reclaimed!.id, done!.id], 1, T0 + 9_999);
        expect(early).toMatchObject({ timedOutJobIds: [], reclaimedJobIds: [reclaimed!.id] });
        const after = await h.beat(worker.workerId, 'running', [late!.id, reclaimed!.id, done!.id], 2, T0 + 10_000);
        expect(after).toMatchObject({ timedOutJobIds: [late!.id], reclaimedJobIds: [reclaimed!.id] });
      });

      it('records progress and checkpoints of a held job, renewing its lease', async () => {
        const worker = await h.register();
        const [job] = await h.enqueue({});
        const [claimed] = (await h.claim(worker.workerId, ['default'], 1, T0, 3_000)).jobs;
        const report = (update: object, now: number, workerId = worker.workerId, leaseToken = claimed!.lease!.token) =>
          h.store.recordProgress({ workerId, jobId: job!.id, leaseToken, now, ...update });
        expect(await report({ progress: 0.5, data: { step: 1 } }, T0 + 1_000)).toEqual({
          applied: true,
          leaseExpiresAt: T0 + 1_000 + VISIBILITY_MS,
        });
        expect(await report({ progress: 0.25, checkpoint: { cursor: 5 } }, T0 + 2_000)).toMatchObject({ applied: true });
        expect(await report({ progress: 0.9 }, T0 + 3_000, 'someone-else')).toEqual({ applied: false });
        expect(await report({ progress: 0.9 }, T0 + 3_000, worker.workerId, 'stale.1')).toEqual({ applied: false });
        expect(await h.store.getJob(job!.id)).toMatchObject({
          progress: 0.5,
          progressData: { step: 1 },
          lastCheckpoint: { cursor: 5 },
          lease: { isConfirmed: true, renewedAt: T0 + 2_000, expiresAt: T0 + 2_000 + VISIBILITY_MS },
        });
      });

      it('keeps progress of a failed attempt, hands the checkpoint to the next one, and completes at 1.0', async () => {
        const worker = await h.register();
        const [job] = await h.enqueue({});
        const [first] = (await h.claim(worker.workerId, ['default'])).jobs;
        await h.store.recordProgress({
          workerId: worker.workerId,
          jobId: job!.id,
          leaseToken: first!.lease!.token,
          progress: 0.4,
          checkpoint: [1, 2],
          now: T0 + 1,
        });
        const outcome = h.outcome(first!, { type: 'Boom', message: '' }, T0 + 2, true);
        await h.store.fail({
          workerId: worker.workerId,
          items: [{ jobId: job!.id, leaseToken: first!.lease!.token, outcome }],
          now: T0 + 2,
        });
        expect(await h.store.getJob(job!.id)).toMatchObject({ state: 'available', progress: 0.4, lastCheckpoint: [1, 2] });
        const [second] = (await h.claim(worker.workerId, ['default'], 1, T0 + 3)).jobs;
        expect(second).toMatchObject({ attempt: 2, lastCheckpoint: [1, 2] });
        expect(second!.progress).toBeUndefined();
        expect((await h.store.getJob(job!.id))!.progress).toBeUndefined();
        await h.store.recordProgress({
          workerId: worker.workerId,
          jobId: job!.id,
          leaseToken: second!.lease!.token,
          data: { phase: 'b' },
          now: T0 + 4,
        });
        expect((await h.store.getJob(job!.id))!.progress).toBeUndefined();
        await h.store.recordProgress({
          workerId: worker.workerId,
          jobId: job!.id,
          leaseToken: second!.lease!.token,
          progress: 0.1,
          now: T0 + 5,
        });
        await h.store.ack({ workerId: worker.workerId, items: [{ jobId: job!.id, leaseToken: second!.lease!.token }], now: T0 + 6 });
        expect(await h.store.getJob(job!.id)).toMatchObject({ state: 'completed', progress: 1, progressData: { phase: 'b' } });
      });

      it('lists when active jobs last showed signs of life', async () => {
        const worker = await h.register({ queues: ['default', 'other'] });
        const [a] = await h.enqueue({ queue: 'default' }, { queue: 'other' });
        await h.claim(worker.workerId, ['default', 'other'], 10, T0);
        await h.beat(worker.workerId, 'running', [a!.id], 1, T0 + 500);
        const found = await h.store.listActiveHeartbeats(10);
        expect(found.toSorted((x, y) => x.queue.localeCompare(y.queue))).toEqual([
          { queue: 'default', renewedAt: T0 + 500 },
          { queue: 'other', renewedAt: T0 },
        ]);
      });

      it('carries published signals to every subscriber', async () => {
        await h.store.publish({ kind: 'jobsTimedOut', workerId: 'w', jobIds: ['j'] });
        await h.store.publish({ kind: 'jobsReclaimed', workerId: 'w', jobIds: ['k'] });
        expect(await h.waitForSignal('jobsTimedOut')).toEqual({ kind: 'jobsTimedOut', workerId: 'w', jobIds: ['j'] });
        expect(await h.waitForSignal('jobsReclaimed')).toEqual({ kind: 'jobsReclaimed', workerId: 'w', jobIds: ['k'] });
      });
    });

    describe('workers', () => {
      it('refuses a second registration of a registered id', async () => {
        const worker = await h.register();
        expect((await refusal(h.register({ workerId: worker.workerId }))).code).toBe('duplicate');
      });

      it('records the principal that registered a worker as its owner, and returns it with the worker and in listings', async () => {
        const spiffe = await h.register({ workerId: 'w-a', owner: 'spiffe://cluster.local/ns/billing/sa/worker' });
        const anonymous = await h.register({ workerId: 'w-b' });
        const unicode = await h.register({ workerId: 'w-c', owner: 'équipe "paie", O=Ünïcode' });
        expect((await h.store.getWorker(spiffe.workerId))!.worker.owner).toBe('spiffe://cluster.local/ns/billing/sa/worker');
        expect((await h.store.getWorker(anonymous.workerId))!.worker.owner).toBe('');
        const listed = await h.store.listWorkers({ limit: 10, scanBudget: 100 });
        expect(listed.items.map(({ worker }) => [worker.workerId, worker.owner])).toEqual([
          ['w-a', spiffe.owner],
          ['w-b', ''],
          ['w-c', unicode.owner],
        ]);
      });

      it("refuses another principal's registration of a live worker id and keeps the first owner", async () => {
        const worker = await h.register({ owner: 'team-a' });
        expect((await refusal(h.register({ workerId: worker.workerId, owner: 'team-b' }))).code).toBe('duplicate');
        expect((await h.store.getWorker(worker.workerId))!.worker).toMatchObject({ owner: 'team-a', registeredAt: T0 });
      });

      it('keeps the owner through beats and directives, and lets another principal register the id once it is removed', async () => {
        const worker = await h.register({ owner: 'team-a' });
        await h.beat(worker.workerId, 'quiet', [], 1, T0 + 1);
        const { worker: beaten } = (await h.store.getWorker(worker.workerId))!;
        expect(
          await h.store.directWorker({
            workerId: worker.workerId,
            expected: { state: beaten.state },
            next: { state: 'quiet', directive: 'terminate' },
          }),
        ).toBe('applied');
        expect((await h.store.getWorker(worker.workerId))!.worker).toMatchObject({ owner: 'team-a', directive: 'terminate' });
        expect(
          await h.store.removeWorker({ workerId: worker.workerId, reason: 'deregistered', now: T0 + 2, recoveries: [] }),
        ).toMatchObject({
          removed: true,
        });
        await h.register({ workerId: worker.workerId, owner: 'team-b' }, T0 + 3);
        expect((await h.store.getWorker(worker.workerId))!.worker).toMatchObject({ owner: 'team-b', registeredAt: T0 + 3 });
      });

      it('records beats: liveness, reported state, renewed leases and cancelled jobs', async () => {
        const worker = await h.register();
        await h.enqueue({}, {});
        const [a, b] = (await h.claim(worker.workerId, ['default'])).jobs;
        await h.store.cancel(b!.id, T0);
        const outcome = await h.beat(worker.workerId, 'quiet', [a!.id, b!.id], 1, T0 + 500);
        expect(outcome).toEqual({
          result: 'applied',
          desiredState: 'quiet',
          cancelledJobIds: [b!.id],
          timedOutJobIds: [],
          reclaimedJobIds: [],
        });
        expect((await h.store.getJob(a!.id))!.lease).toMatchObject({ expiresAt: T0 + 500 + VISIBILITY_MS, isConfirmed: true });
        expect((await h.store.getWorker(worker.workerId))!.worker).toMatchObject({
          lastBeatAt: T0 + 500,
          state: 'quiet',
          reportedJobIds: [a!.id, b!.id],
        });
        await h.waitForSignal('workerDirected', (s) => s.workerId === worker.workerId && s.state === 'quiet');
      });

      it('answers but ignores a beat whose sequence is not above the last one', async () => {
        const worker = await h.register();
        await h.beat(worker.workerId, 'running', [], 5, T0 + 1);
        expect(await h.beat(worker.workerId, 'quiet', [], 4, T0 + 2)).toMatchObject({ result: 'stale', desiredState: 'running' });
        expect((await h.store.getWorker(worker.workerId))!.worker).toMatchObject({ lastBeatAt: T0 + 1, state: 'running', lastSequence: 5 });
      });

      it('refuses to apply a beat decided from a state that changed since', async () => {
        const worker = await h.register();
        const params = { workerId: worker.workerId, sequence: 1, activeJobIds: [], now: T0 + 1 };
        await h.direct(worker.workerId, 'quiet');
        const outcome = await h.recordBeat({
          ...params,
          expected: { state: 'running', directive: undefined },
          next: { state: 'running' },
        });
        expect(outcome).toMatchObject({ result: 'conflict', desiredState: 'quiet' });
        expect((await h.store.getWorker(worker.workerId))!.worker.lastBeatAt).toBe(T0);
      });

      it('records a batch of beats in order, each as alone: applied, unknown worker, conflicting state, a second beat', async () => {
        const good = await h.register({ workerId: 'w-good' });
        const directed = await h.register({ workerId: 'w-directed' });
        await h.enqueue({});
        const [held] = (await h.claim(good.workerId, ['default'])).jobs;
        await h.direct(directed.workerId, 'quiet');
        const running = { state: 'running' as const };
        const beat = { sequence: 1, activeJobIds: [], now: T0 + 10, expected: running, next: running };
        const outcomes = await h.store.recordBeats([
          { ...beat, workerId: good.workerId, activeJobIds: [held!.id] },
          { ...beat, workerId: 'nobody' },
          { ...beat, workerId: directed.workerId },
          // The same worker again: it sees the first beat (its sequence 1 is no longer above the last).
          { ...beat, workerId: good.workerId, now: T0 + 20 },
          { ...beat, workerId: good.workerId, sequence: 2, now: T0 + 30, next: { state: 'quiet' } },
        ]);
        expect(outcomes).toEqual([
          { result: 'applied', desiredState: 'running', cancelledJobIds: [], timedOutJobIds: [], reclaimedJobIds: [] },
          { result: 'not_found' },
          expect.objectContaining({ result: 'conflict', desiredState: 'quiet' }),
          expect.objectContaining({ result: 'stale', desiredState: 'running' }),
          { result: 'applied', desiredState: 'quiet', cancelledJobIds: [], timedOutJobIds: [], reclaimedJobIds: [] },
        ]);
        expect((await h.store.getJob(held!.id))!.lease).toMatchObject({ expiresAt: T0 + 10 + VISIBILITY_MS, isConfirmed: true });
        expect((await h.store.getWorker(good.workerId))!.worker).toMatchObject({ lastBeatAt: T0 + 30, lastSequence: 2, state: 'quiet' });
        expect((await h.store.getWorker(directed.workerId))!.worker.lastBeatAt).toBe(T0);
        expect((await refusal(h.recordBeat({ ...beat, workerId: 'nobody' }))).code).toBe('not_found');
        expect((await refusal(h.store.recordBeats([]))).code).toBe('backend_error');
      });

      it('applies directives, refusing one decided from a state that changed since', async () => {
        const worker = await h.register();
        expect(await h.direct(worker.workerId, 'terminate')).toBe('applied');
        await h.waitForSignal('workerDirected', (s) => s.workerId === worker.workerId && s.state === 'terminate');
        expect((await h.store.getWorker(worker.workerId))!.worker).toMatchObject({ state: 'running', directive: 'terminate' });
        const stale = {
          workerId: worker.workerId,
          expected: { state: 'running' as const },
          next: { state: 'running' as const, directive: 'quiet' as const },
        };
        expect(await h.store.directWorker(stale)).toBe('conflict');
        expect((await refusal(h.store.directWorker({ ...stale, workerId: 'nobody' }))).code).toBe('not_found');
      });

      it('keeps a directive through the beats of a worker that has not obeyed it, and clears it with the beat that obeys', async () => {
        const worker = await h.register();
        await h.direct(worker.workerId, 'quiet');
        expect(await h.beat(worker.workerId, 'running', [], 1, T0 + 1)).toMatchObject({ result: 'applied', desiredState: 'quiet' });
        expect((await h.store.getWorker(worker.workerId))!.worker).toMatchObject({ state: 'running', directive: 'quiet' });
        expect(await h.beat(worker.workerId, 'quiet', [], 2, T0 + 2)).toMatchObject({ result: 'applied', desiredState: 'quiet' });
        const { worker: obeyed } = (await h.store.getWorker(worker.workerId))!;
        expect(obeyed).toMatchObject({ state: 'quiet', lastSequence: 2 });
        expect(obeyed.directive).toBeUndefined();
      });

      it('finds silent workers and removes them with their jobs, unless they beat meanwhile', async () => {
        const worker = await h.register({}, T0);
        await h.enqueue({});
        const [held] = (await h.claim(worker.workerId, ['default'])).jobs;
        const [silent] = await h.store.findSilentWorkers(T0 + 1, 10);
        expect(silent!.heldJobIds).toEqual([held!.id]);
        const recoveries = [
          {
            jobId: held!.id,
            leaseToken: held!.lease!.token,
            outcome: h.outcome(held!, { type: 'worker_death', message: '' }, T0 + 1, true),
          },
        ];
        await h.beat(worker.workerId, 'running', [held!.id], 1, T0 + 1);
        expect(
          (await h.store.removeWorker({ workerId: worker.workerId, reason: 'dead', ifLastBeatAt: T0, recoveries, now: T0 + 1 })).removed,
        ).toBe(false);
        const removal = await h.store.removeWorker({
          workerId: worker.workerId,
          reason: 'dead',
          ifLastBeatAt: T0 + 1,
          recoveries,
          now: T0 + 2,
        });
        expect(removal.removed).toBe(true);
        expect(removal.transitions).toEqual([expect.objectContaining({ jobId: held!.id, from: 'active', to: 'available' })]);
        expect(await h.store.getJob(held!.id)).toMatchObject({ state: 'available', error: { type: 'worker_death' } });
        expect(await h.store.getWorker(worker.workerId)).toBeUndefined();
        await h.waitForSignal('workerRemoved', (s) => s.workerId === worker.workerId);
      });

      it('refuses to remove a worker holding a job the removal does not cover', async () => {
        const worker = await h.register();
        await h.enqueue({});
        await h.claim(worker.workerId, ['default']);
        expect((await h.store.removeWorker({ workerId: worker.workerId, reason: 'deregistered', recoveries: [], now: T0 })).removed).toBe(
          false,
        );
      });
    });

    describe('retention', () => {
      const retention = { completedMs: 1_000, cancelledMs: 2_000, discardedMs: 3_000, maxJobs: 0 };

      async function finish(count: number, now: number): Promise<string[]> {
        const worker = await h.register({ concurrency: count });
        await h.enqueue(...Array.from({ length: count }, () => ({})));
        const { jobs } = await h.claim(worker.workerId, ['default'], count, now);
        await h.store.ack({ workerId: worker.workerId, items: jobs.map((j) => ({ jobId: j.id, leaseToken: j.lease!.token })), now });
        return jobs.map((j) => j.id);
      }

      it('removes finished jobs once past the retention of their state', async () => {
        const [completed] = await finish(1, T0);
        const [cancelled] = await h.enqueue({});
        await h.store.cancel(cancelled!.id, T0);
        expect(await h.store.pruneTerminal(T0 + 999, retention, 100)).toBe(0);
        expect(await h.store.pruneTerminal(T0 + 1_000, retention, 100)).toBe(1);
        expect(await h.store.getJob(completed!)).toBeUndefined();
        expect(await h.store.getJob(cancelled!.id)).toBeDefined();
        expect(await h.store.pruneTerminal(T0 + 2_000, retention, 100)).toBe(1);
        expect(await h.store.getJob(cancelled!.id)).toBeUndefined();
        const counts = (await h.store.listQueues({ limit: 100 })).items.find((c) => c.queue === 'default');
        expect([counts?.completed ?? 0, counts?.cancelled ?? 0]).toEqual([0, 0]);
      });

      it('keeps at most maxJobs finished jobs, removing the oldest first', async () => {
        const older = await finish(3, T0);
        const newer = await finish(2, T0 + 10);
        expect(await h.store.pruneTerminal(T0 + 20, { ...retention, completedMs: 3_600_000, maxJobs: 2 }, 100)).toBe(3);
        expect(await h.store.getJobs([...older, ...newer])).toEqual([
          undefined,
          undefined,
          undefined,
          expect.anything(),
          expect.anything(),
        ]);
      });

      it('over the cap, removes the oldest whatever their state, then only those past their retention', async () => {
        const [due] = await finish(1, T0);
        const [recent] = await finish(1, T0 + 10);
        const [cancelled] = await h.enqueue({});
        await h.store.cancel(cancelled!.id, T0 + 5);
        const [lateCancel] = await h.enqueue({});
        await h.store.cancel(lateCancel!.id, T0 + 1_500);
        // At T0 + 1_005 only `due` is past its retention; the cap of 2 takes one more, the oldest: `cancelled`.
        expect(await h.store.pruneTerminal(T0 + 1_005, { ...retention, maxJobs: 2 }, 100)).toBe(2);
        expect(await h.store.getJobs([due!, cancelled!.id, recent!, lateCancel!.id])).toEqual([
          undefined,
          undefined,
          expect.anything(),
          expect.anything(),
        ]);
        // Within the cap, only what is past its retention goes: `recent` (completed at T0 + 10) at T0 + 1_010.
        expect(await h.store.pruneTerminal(T0 + 1_009, { ...retention, maxJobs: 2 }, 100)).toBe(0);
        expect(await h.store.pruneTerminal(T0 + 1_010, { ...retention, maxJobs: 2 }, 100)).toBe(1);
        expect(await h.store.getJobs([recent!, lateCancel!.id])).toEqual([undefined, expect.anything()]);
      });

      it('never removes a job that left its terminal state', async () => {
        const worker = await h.register();
        const [job] = await h.enqueue({ retry: { maxAttempts: 1 } });
        const [claimed] = (await h.claim(worker.workerId, ['default'])).jobs;
        const outcome = h.outcome(claimed!, { type: 'Boom', message: '' }, T0);
        await h.store.fail({ workerId: worker.workerId, items: [{ jobId: job!.id, leaseToken: claimed!.lease!.token, outcome }], now: T0 });
        await h.store.retry(job!.id, T0 + 1);
        expect(await h.store.pruneTerminal(T0 + 10_000, retention, 100)).toBe(0);
        expect(await h.state(job!.id)).toBe('available');
      });
    });

    it('stops listing a queue once its last job is removed', async () => {
      const [job] = await h.enqueue({ queue: 'q-gone' }, { queue: 'q-kept', scheduledAt: T0 + 60_000 });
      await h.store.cancel(job!.id, T0);
      expect(await h.store.pruneTerminal(T0 + 1, { completedMs: 0, cancelledMs: 0, discardedMs: 0, maxJobs: 0 }, 10)).toBe(1);
      expect((await h.store.listQueues({ limit: 10 })).items.map((c) => c.queue)).toEqual(['q-kept']);
    });

    it('lists queues one page at a time, in name order', async () => {
      await h.enqueue({ queue: 'q-c' }, { queue: 'q-a' }, { queue: 'q-b' }, { queue: 'q-a' });
      const first = await h.store.listQueues({ limit: 2 });
      expect(first.items.map((c) => c.queue)).toEqual(['q-a', 'q-b']);
      expect(first.items[0]).toMatchObject({ available: 2 });
      const second = await h.store.listQueues({ after: first.nextAfter!, limit: 2 });
      expect(second).toEqual({ items: [expect.objectContaining({ queue: 'q-c', available: 1 })] });
    });

    it('lists workers one page at a time in id order, filtered by label or queue', async () => {
      const ids = ['w-b', 'w-a', 'w-d', 'w-c'];
      for (const [i, workerId] of ids.entries()) await h.register({ workerId, labels: i % 2 === 0 ? ['canary'] : [], queues: ['default'] });
      const first = await h.store.listWorkers({ limit: 3, scanBudget: 100 });
      expect(first.items.map((s) => s.worker.workerId)).toEqual(['w-a', 'w-b', 'w-c']);
      const second = await h.store.listWorkers({ after: first.nextAfter!, limit: 3, scanBudget: 100 });
      expect([second.items.map((s) => s.worker.workerId), second.nextAfter]).toEqual([['w-d'], undefined]);
      const canaries = await h.store.listWorkers({ limit: 10, filter: { label: 'canary' }, scanBudget: 100 });
      expect(canaries.items.map((s) => s.worker.workerId)).toEqual(['w-b', 'w-d']);
    });

    it('examines at most the scan budget of workers for a filtered page', async () => {
      for (const workerId of ['w-1', 'w-2', 'w-3', 'w-4']) await h.register({ workerId, labels: workerId === 'w-4' ? ['x'] : [] });
      const page = await h.store.listWorkers({ limit: 10, filter: { label: 'x' }, scanBudget: 2 });
      expect(page).toEqual({ items: [], nextAfter: 'w-2' });
      const rest = await h.store.listWorkers({ after: 'w-2', limit: 10, filter: { label: 'x' }, scanBudget: 2 });
      expect(rest.items.map((s) => s.worker.workerId)).toEqual(['w-4']);
    });

    it('counts jobs per queue and state', async () => {
      const worker = await h.register();
      await h.enqueue({ queue: 'default' }, { queue: 'default' }, { queue: 'other', scheduledAt: T0 + 1_000 });
      await h.claim(worker.workerId, ['default'], 1);
      const counts = (await h.store.listQueues({ limit: 100 })).items;
      expect(counts).toEqual([
        expect.objectContaining({ queue: 'default', available: 1, active: 1, scheduled: 0 }),
        expect.objectContaining({ queue: 'other', scheduled: 1, available: 0 }),
      ]);
    });

    describe('event log', () => {
      async function factsAfter(after?: string): Promise<RecordedFact[]> {
        return (await h.store.readFacts({ ...(after === undefined ? {} : { after }), limit: 1_000 })).facts;
      }
      const lastCursor = async (): Promise<string | undefined> => (await factsAfter()).at(-1)?.cursor;
      const jobFacts = (recorded: RecordedFact[]) => recorded.map((r) => r.fact).filter((f) => f.kind === 'job');

      it('records one fact per job change, with the fields its events need, as the transition returned', async () => {
        const traceparent = '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01';
        const worker = await h.register();
        const start = await lastCursor();
        const [job] = await h.enqueue({ priority: 3, meta: { traceparent } });
        const [scheduled] = await h.enqueue({ scheduledAt: T0 + 1_000 });
        const [claimed] = (await h.claim(worker.workerId, ['default'], 1, T0 + 5)).jobs;
        const leaseToken = claimed!.lease!.token;
        const outcome = h.outcome(claimed!, { type: 'Boom', message: 'no' }, T0 + 10);
        const [failed] = await h.store.fail({ workerId: worker.workerId, items: [{ jobId: job!.id, leaseToken, outcome }], now: T0 + 10 });
        const promoted = await h.store.promoteDue(T0 + 1_010, 10);
        const [again] = (await h.claim(worker.workerId, ['default'], 1, T0 + 2_000)).jobs;
        const [acked] = await h.store.ack({
          workerId: worker.workerId,
          items: [{ jobId: job!.id, leaseToken: again!.lease!.token }],
          now: T0 + 2_500,
        });
        await h.store.cancel(scheduled!.id, T0 + 3_000);
        const recorded = await factsAfter(start);
        const base = { kind: 'job', jobId: job!.id, jobType: 'contract.job', queue: 'default', traceparent };
        expect(recorded.map((r) => r.fact)).toMatchObject([
          { ...base, at: T0, from: 'none', to: 'available', attempt: 0, priority: 3 },
          { kind: 'job', jobId: scheduled!.id, at: T0, from: 'none', to: 'scheduled', scheduledAt: T0 + 1_000 },
          {
            ...base,
            at: T0 + 5,
            from: 'available',
            to: 'active',
            attempt: 1,
            workerId: worker.workerId,
            startedAt: T0 + 5,
            enqueuedAt: T0,
          },
          {
            ...base,
            at: T0 + 10,
            from: 'active',
            to: 'retryable',
            attempt: 1,
            workerId: worker.workerId,
            startedAt: T0 + 5,
            error: { type: 'Boom', message: 'no' },
            maxAttempts: claimed!.retry.maxAttempts,
            nextRetryAt: T0 + 1_010,
          },
          { kind: 'job', jobId: scheduled!.id, at: T0 + 1_010, from: 'scheduled', to: 'available' },
          { ...base, at: T0 + 1_010, from: 'retryable', to: 'available', attempt: 1 },
          { ...base, at: T0 + 2_000, from: 'available', to: 'active', attempt: 2, startedAt: T0 + 2_000, enqueuedAt: T0 + 1_010 },
          { ...base, at: T0 + 2_500, from: 'active', to: 'completed', attempt: 2, workerId: worker.workerId, startedAt: T0 + 2_000 },
          { kind: 'job', jobId: scheduled!.id, at: T0 + 3_000, from: 'available', to: 'cancelled' },
        ]);
        const factOf = (jobId: string, from: string, to: string) =>
          recorded.find((r) => r.fact.kind === 'job' && r.fact.jobId === jobId && r.fact.from === from && r.fact.to === to)!.fact;
        expect({ kind: 'job', ...(failed as { transition: object }).transition }).toEqual(factOf(job!.id, 'active', 'retryable'));
        expect({ kind: 'job', ...(acked as { transition: object }).transition }).toEqual(factOf(job!.id, 'active', 'completed'));
        expect(promoted.transitions.map((t) => ({ kind: 'job', ...t }))).toEqual([
          factOf(scheduled!.id, 'scheduled', 'available'),
          factOf(job!.id, 'retryable', 'available'),
        ]);
      });

      it('records expiries with their error and creation time, and undelivered releases with their reason', async () => {
        const worker = await h.register();
        const [held] = await h.enqueue({});
        const [expiring] = await h.enqueue({ queue: 'other', expiresAt: T0 + 1_000 });
        const [claimed] = (await h.claim(worker.workerId, ['default'], 1, T0)).jobs;
        const start = await lastCursor();
        const leases = [{ jobId: held!.id, leaseToken: claimed!.lease!.token }];
        const released = await h.store.releaseUndelivered({ leases, now: T0 + 1, requireUnconfirmedLapse: false });
        const expired = await h.expireWaiting(T0 + 1_000);
        const recorded = (await factsAfter(start)).map((r) => r.fact);
        expect(recorded).toMatchObject([
          { kind: 'job', jobId: held!.id, at: T0 + 1, from: 'active', to: 'available', reason: 'undelivered', workerId: worker.workerId },
          {
            kind: 'job',
            jobId: expiring!.id,
            at: T0 + 1_000,
            from: 'available',
            to: 'discarded',
            createdAt: T0,
            deadLetter: false,
            error: { type: 'expired' },
          },
        ]);
        expect([...released, ...expired].map((t) => ({ kind: 'job', ...t }))).toEqual(recorded);
      });

      it('records an undelivered release without the error of an earlier attempt: it is no failure', async () => {
        const worker = await h.register();
        const [job] = await h.enqueue({});
        const [first] = (await h.claim(worker.workerId, ['default'], 1, T0)).jobs;
        const outcome = h.outcome(first!, { type: 'Boom', message: '' }, T0 + 1, true);
        await h.store.fail({
          workerId: worker.workerId,
          items: [{ jobId: job!.id, leaseToken: first!.lease!.token, outcome }],
          now: T0 + 1,
        });
        const [second] = (await h.claim(worker.workerId, ['default'], 1, T0 + 2)).jobs;
        const leases = [{ jobId: job!.id, leaseToken: second!.lease!.token }];
        const [released] = await h.store.releaseUndelivered({ leases, now: T0 + 3, requireUnconfirmedLapse: false });
        const [fact] = (await factsAfter()).slice(-1);
        expect(fact!.fact).toEqual({ kind: 'job', ...released });
        expect(fact!.fact).toMatchObject({ from: 'active', to: 'available', reason: 'undelivered' });
        expect(fact!.fact).not.toHaveProperty('error');
        expect((await h.store.queueStats('default', T0 + 3)).minutes.at(-1)).toMatchObject({ failed: 1 });
      });

      it('records workers registering, changing state in a beat, and leaving after the facts of the jobs they held', async () => {
        const worker = await h.register({ queues: ['default', 'other'], concurrency: 4 });
        await h.enqueue({});
        const [held] = (await h.claim(worker.workerId, ['default'])).jobs;
        await h.beat(worker.workerId, 'running', [held!.id], 1, T0 + 50);
        await h.beat(worker.workerId, 'quiet', [held!.id], 2, T0 + 100);
        const outcome = h.outcome(held!, { type: 'worker_death', message: '' }, T0 + 200, true);
        const recoveries = [{ jobId: held!.id, leaseToken: held!.lease!.token, outcome }];
        await h.store.removeWorker({ workerId: worker.workerId, reason: 'dead', ifLastBeatAt: T0 + 100, recoveries, now: T0 + 200 });
        const leaving = await h.register({}, T0 + 300);
        await h.store.removeWorker({ workerId: leaving.workerId, reason: 'deregistered', recoveries: [], now: T0 + 400 });
        const recorded = (await factsAfter())
          .map((r) => r.fact)
          .filter((f) => f.kind === 'worker' || (f.kind === 'job' && f.from === 'active'));
        expect(recorded).toMatchObject([
          { kind: 'worker', at: T0, workerId: worker.workerId, from: 'none', to: 'running', queues: ['default', 'other'], concurrency: 4 },
          { kind: 'worker', at: T0 + 100, workerId: worker.workerId, from: 'running', to: 'quiet', activeJobs: 1 },
          {
            kind: 'job',
            at: T0 + 200,
            jobId: held!.id,
            from: 'active',
            to: 'available',
            workerId: worker.workerId,
            error: { type: 'worker_death' },
          },
          {
            kind: 'worker',
            at: T0 + 200,
            workerId: worker.workerId,
            from: 'quiet',
            to: 'removed',
            reason: 'dead',
            registeredAt: T0,
            lastBeatAt: T0 + 100,
            activeJobs: 1,
          },
          { kind: 'worker', at: T0 + 300, workerId: leaving.workerId, from: 'none', to: 'running' },
          {
            kind: 'worker',
            at: T0 + 400,
            workerId: leaving.workerId,
            from: 'running',
            to: 'removed',
            reason: 'deregistered',
            activeJobs: 0,
          },
        ]);
      });

      it('records applied progress and queue pauses, and nothing for refused progress, deletes or retention', async () => {
        const worker = await h.register();
        const [job] = await h.enqueue({});
        const [claimed] = (await h.claim(worker.workerId, ['default'])).jobs;
        const start = await lastCursor();
        const progress = { jobId: job!.id, leaseToken: claimed!.lease!.token, progress: 0.5 };
        await h.store.recordProgress({ ...progress, workerId: worker.workerId, now: T0 + 1 });
        await h.store.recordProgress({ ...progress, workerId: 'someone-else', now: T0 + 2 });
        await h.store.setQueuePaused({ queue: 'default', paused: true, now: T0 + 3, actor: 'ops' });
        await h.store.setQueuePaused({ queue: 'default', paused: true, now: T0 + 4, actor: 'ops' });
        await h.store.setQueuePaused({ queue: 'default', paused: false, now: T0 + 5 });
        await h.store.ack({ workerId: worker.workerId, items: [{ jobId: job!.id, leaseToken: claimed!.lease!.token }], now: T0 + 6 });
        const [doomed] = await h.enqueue({});
        await h.store.cancel(doomed!.id, T0 + 7);
        const end = await lastCursor();
        await h.store.deleteJobs({ jobIds: [job!.id], now: T0 + 8 });
        await h.store.pruneTerminal(T0 + 9, { completedMs: 0, cancelledMs: 0, discardedMs: 0, maxJobs: 0 }, 10);
        expect(await lastCursor()).toBe(end);
        expect((await factsAfter(start)).map((r) => r.fact)).toMatchObject([
          { kind: 'progress', at: T0 + 1, jobId: job!.id, workerId: worker.workerId, attempt: 1, progress: 0.5, queue: 'default' },
          { kind: 'queue', at: T0 + 3, queue: 'default', paused: true, actor: 'ops' },
          { kind: 'queue', at: T0 + 5, queue: 'default', paused: false },
          { kind: 'job', jobId: job!.id, to: 'completed' },
          { kind: 'job', jobId: doomed!.id, to: 'available' },
          { kind: 'job', jobId: doomed!.id, to: 'cancelled' },
        ]);
      });

      it('reads facts after a cursor, oldest first, one page at a time, with increasing cursors and the oldest held', async () => {
        expect(await h.store.readFacts({ limit: 10 })).toEqual({ facts: [] });
        await h.enqueue({}, {}, {}, {}, {});
        const all = await factsAfter();
        expect(all).toHaveLength(5);
        expect(all.every((r) => isCursor(r.cursor))).toBe(true);
        expect(all.slice(1).every((r, i) => compareCursors(all[i]!.cursor, r.cursor) < 0)).toBe(true);
        expect(await h.store.readFacts({ limit: 2 })).toEqual({ facts: all.slice(0, 2), oldest: all[0]!.cursor });
        expect(await h.store.readFacts({ after: all[1]!.cursor, limit: 2 })).toEqual({ facts: all.slice(2, 4), oldest: all[0]!.cursor });
        expect(await h.store.readFacts({ after: all[4]!.cursor, limit: 2 })).toEqual({ facts: [], oldest: all[0]!.cursor });
        expect(await h.store.readFacts({ limit: 0 })).toEqual({ facts: [], oldest: all[0]!.cursor });
      });

      it('drops the facts older than the retention age', async () => {
        const jobs = [0, 1_000, 2_000].map((at) => h.job({}, { now: T0 + at }));
        for (const job of jobs) await h.store.enqueue([job]);
        const all = await factsAfter();
        await h.store.pruneFacts(T0 + DEFAULT_EVENT_RETENTION.maxAgeMs - 1);
        expect(await factsAfter()).toEqual(all);
        expect(await h.store.pruneFacts(T0 + DEFAULT_EVENT_RETENTION.maxAgeMs + 10_000)).toBeGreaterThan(0);
        expect(await h.store.readFacts({ limit: 10 })).toEqual({ facts: [] });
      });

      it('keeps the newest facts of its count, and records none when the count is 0', async () => {
        const small = new StoreHarness(await factory.create({ events: { maxCount: 3, maxAgeMs: DEFAULT_EVENT_RETENTION.maxAgeMs } }));
        const off = new StoreHarness(await factory.create({ events: { maxCount: 0, maxAgeMs: DEFAULT_EVENT_RETENTION.maxAgeMs } }));
        try {
          const jobs: string[] = [];
          for (let i = 0; i < 10; i++) jobs.push((await small.enqueue({}))[0]!.id);
          const { facts, oldest } = await small.store.readFacts({ limit: 100 });
          // A shared store may trim approximately (in whole blocks): at least the count is kept, the newest last.
          expect(facts.slice(-3).map((r) => r.fact.kind === 'job' && r.fact.jobId)).toEqual(jobs.slice(-3));
          expect(oldest).toBe(facts[0]!.cursor);
          await off.enqueue({});
          expect(await off.store.readFacts({ limit: 100 })).toEqual({ facts: [] });
        } finally {
          for (const other of [small, off]) {
            other.close();
            const problems = await other.store.audit();
            await other.store.close();
            expect(problems).toEqual([]);
          }
        }
      });

      it('follows the log from a cursor: what was recorded after it, then what comes, in order, each once', async () => {
        await h.enqueue({}, {}, {});
        const [first] = await factsAfter();
        const following = factFollower();
        const stop = await h.store.followFacts(first!.cursor, following.listener);
        for (let i = 0; i < 3; i++) await h.enqueue({});
        await following.until(5);
        stop();
        expect(following.got.map((r) => r.cursor)).toEqual((await factsAfter(first!.cursor)).map((r) => r.cursor));
      });

      it('follows from the next fact when given no cursor, until told to stop', async () => {
        await h.enqueue({});
        const early = factFollower();
        const stopEarly = await h.store.followFacts(undefined, early.listener);
        const [job] = await h.enqueue({});
        await early.until(1);
        stopEarly();
        const late = factFollower();
        const stopLate = await h.store.followFacts(undefined, late.listener);
        const [next] = await h.enqueue({});
        await late.until(1);
        stopLate();
        expect(jobFacts(early.got).map((f) => f.jobId)).toEqual([job!.id]);
        expect(jobFacts(late.got).map((f) => f.jobId)).toEqual([next!.id]);
      });

      it('tells heartbeat followers of applied beats and lease extensions, with the leases they renewed', async () => {
        const worker = await h.register();
        await h.enqueue({});
        const [held] = (await h.claim(worker.workerId, ['default'])).jobs;
        const notices: HeartbeatNotice[] = [];
        const progress = new Progress();
        const stop = await h.store.followHeartbeats((notice) => {
          notices.push(notice);
          progress.changed();
        });
        // Following has begun once the promise resolves: the first beat after it is told.
        await h.beat(worker.workerId, 'running', [held!.id], 1, T0 + 1);
        await progress.until(
          () => notices.length > 0,
          () => 'a beat notice',
        );
        const renewal = (at: number) => ({
          jobId: held!.id,
          jobType: 'contract.job',
          queue: 'default',
          attempt: 1,
          visibleUntil: at + VISIBILITY_MS,
        });
        expect(notices[0]).toMatchObject({ workerId: worker.workerId, state: 'running', jobs: [renewal(notices[0]!.at)] });
        const params = { workerId: worker.workerId, jobId: held!.id, leaseToken: held!.lease!.token, now: T0 + 10_000 };
        await h.store.extendLease(params);
        const extended = await progress.until(
          () => notices.find((n) => n.at === T0 + 10_000),
          () => 'a lease extension notice',
        );
        stop();
        expect(extended).toMatchObject({ workerId: worker.workerId, jobs: [renewal(T0 + 10_000)] });
      });

      it('tells heartbeat followers of every beat of a batch, in order', async () => {
        const workers = [await h.register(), await h.register(), await h.register()];
        const notices: HeartbeatNotice[] = [];
        const progress = new Progress();
        const stop = await h.store.followHeartbeats((notice) => {
          notices.push(notice);
          progress.changed();
        });
        const beats = await Promise.all(
          workers.map(async ({ workerId }) => {
            const { worker } = (await h.store.getWorker(workerId))!;
            const expected = { state: worker.state, directive: worker.directive };
            return { workerId, sequence: 1, activeJobIds: [], now: T0 + 1, expected, next: afterReport(worker, 'running') };
          }),
        );
        await h.store.recordBeats(beats);
        await progress.until(
          () => notices.length >= workers.length,
          () => `${workers.length} beat notices`,
        );
        stop();
        expect(notices.map((n) => n.workerId)).toEqual(workers.map((w) => w.workerId));
      });
    });

    describe('job listings', () => {
      function query(filter: Partial<JobFilter> & Pick<JobFilter, 'states'>, more: Partial<JobQuery> = {}): JobQuery {
        return { filter, order: 'oldest', limit: 100, maxBytes: DELIVERY_BUDGET_BYTES, scanBudget: JOB_SCAN_BUDGET, ...more };
      }
      const ids = async (q: JobQuery) => (await h.store.listJobs(q)).items.map((job) => job.id);

      /** Every page of a listing, following its cursor (bounded). */
      async function pages(q: JobQuery): Promise<string[][]> {
        const found: string[][] = [];
        let after = q.after;
        for (let i = 0; i < 100; i++) {
          const page = await h.store.listJobs({ ...q, ...(after === undefined ? {} : { after }) });
          found.push(page.items.map((job) => job.id));
          if (page.nextAfter === undefined) return found;
          after = page.nextAfter;
        }
        throw new Error('the listing did not end');
      }

      /** Enqueues one job per submission, the nth at T0 + n + 1 (its creation and listing time). */
      async function enqueueInTurn(...submissions: Partial<JobSubmission>[]): Promise<Job[]> {
        const jobs = submissions.map((s, i) => h.job(s, { now: T0 + i + 1 }));
        for (const job of jobs) await h.store.enqueue([job]);
        return jobs;
      }

      /** Runs the jobs' first attempts in turn, the nth ending at times[n]: completed, or failed with `report`. */
      async function finish(jobs: Job[], times: number[], report?: { type: string; code?: 'dead_letter' }): Promise<void> {
        const worker = await h.register({ queues: [...new Set(jobs.map((j) => j.queue))], concurrency: jobs.length });
        for (const [i, job] of jobs.entries()) {
          const [claimed] = (await h.claim(worker.workerId, [job.queue], 1, times[i])).jobs;
          const item = { jobId: claimed!.id, leaseToken: claimed!.lease!.token };
          if (report === undefined) await h.store.ack({ workerId: worker.workerId, items: [item], now: times[i]! });
          else {
            const outcome = h.outcome(claimed!, { message: '', ...report }, times[i]!);
            await h.store.fail({ workerId: worker.workerId, items: [{ ...item, outcome }], now: times[i]! });
          }
        }
      }

      it('pages through a state oldest or newest first', async () => {
        const jobs = (await enqueueInTurn({}, {}, {}, {}, {})).map((j) => j.id);
        const first = await h.store.listJobs(query({ states: ['available'] }, { limit: 2 }));
        expect(first.items.map((j) => j.id)).toEqual(jobs.slice(0, 2));
        expect(first.nextAfter).toBeDefined();
        expect((await pages(query({ states: ['available'] }, { limit: 2 }))).flat()).toEqual(jobs);
        expect((await pages(query({ states: ['available'] }, { limit: 2, order: 'newest' }))).flat()).toEqual(jobs.toReversed());
        expect(await ids(query({ states: ['available'] }, { after: first.nextAfter! }))).toEqual(jobs.slice(2));
      });

      it('lists available jobs first, in run order, then merges the other states by their listing times', async () => {
        const [done, available, scheduled, later] = await enqueueInTurn({ queue: 'done' }, {}, { scheduledAt: T0 + 60_000 }, {});
        const pending = h.job({}, { now: T0 + 5, pending: true });
        await h.store.enqueue([pending]);
        await finish([done!], [T0 + 6]);
        const states: JobState[] = ['available', 'scheduled', 'pending', 'completed'];
        const expected = [available!.id, later!.id, scheduled!.id, pending.id, done!.id];
        expect(await ids(query({ states }))).toEqual(expected);
        expect((await pages(query({ states }, { order: 'newest', limit: 2 }))).flat()).toEqual(expected.toReversed());
        expect((await pages(query({ states }, { limit: 1 }))).flat()).toEqual(expected);
      });

      it('lists available jobs queue by queue in name order, each as it runs: priority, then first in, first out', async () => {
        const [b1, b2, a1, b3, a2] = (
          await enqueueInTurn(
            { queue: 'q-b' },
            { queue: 'q-b', priority: 5 },
            { queue: 'q-a' },
            { queue: 'q-b' },
            { queue: 'q-a', priority: -1 },
          )
        ).map((j) => j.id);
        const runOrder = [a1, a2, b2, b1, b3];
        expect(await ids(query({ states: ['available'] }))).toEqual(runOrder);
        expect((await pages(query({ states: ['available'] }, { limit: 2 }))).flat()).toEqual(runOrder);
        expect((await pages(query({ states: ['available'] }, { order: 'newest', limit: 2 }))).flat()).toEqual(runOrder.toReversed());
        expect(await ids(query({ states: ['available'], queue: 'q-b' }))).toEqual([b2, b1, b3]);
        // The job that runs next is listed first: what a claim takes.
        const worker = await h.register({ queues: ['q-b'] });
        expect((await h.claim(worker.workerId, ['q-b'], 1)).jobs.map((j) => j.id)).toEqual([b2]);
      });

      it('passes at most the scan budget of queues without available jobs in one page, continuing after them', async () => {
        await enqueueInTurn({ queue: 'q-1', scheduledAt: T0 + 60_000 }, { queue: 'q-2', scheduledAt: T0 + 60_000 });
        const [job] = await enqueueInTurn({ queue: 'q-3' });
        const first = await h.store.listJobs(query({ states: ['available'] }, { scanBudget: 2 }));
        expect(first.items).toEqual([]);
        expect(first.nextAfter).toBeDefined();
        expect(await ids(query({ states: ['available'] }, { scanBudget: 2, after: first.nextAfter! }))).toEqual([job!.id]);
      });

      it('lists active jobs by when their attempt started, of one queue by scanning them within the budget', async () => {
        const worker = await h.register({ queues: ['q-a', 'q-b'] });
        const [a1, b1, a2] = (await enqueueInTurn({ queue: 'q-a' }, { queue: 'q-b' }, { queue: 'q-a', priority: 5 })).map((j) => j.id);
        // Started in another order than created: a2 (first in line), b1, a1.
        for (const [queue, at] of [
          ['q-a', T0 + 10],
          ['q-b', T0 + 20],
          ['q-a', T0 + 30],
        ] as const) {
          await h.claim(worker.workerId, [queue], 1, at);
        }
        expect(await ids(query({ states: ['active'] }))).toEqual([a2, b1, a1]);
        expect(await ids(query({ states: ['active'] }, { order: 'newest' }))).toEqual([a1, b1, a2]);
        const ofQueue = query({ states: ['active'], queue: 'q-a' }, { scanBudget: 1 });
        expect(await pages(ofQueue)).toEqual([[a2], [], [a1]]);
      });

      it('filters by queue, type and creation time, using the time where the listing is by it', async () => {
        const jobs = await enqueueInTurn(
          { scheduledAt: T0 + 60_000, queue: 'q1', type: 'a' },
          { scheduledAt: T0 + 60_000, queue: 'q2', type: 'a' },
          { scheduledAt: T0 + 60_000, queue: 'q1', type: 'b' },
          { scheduledAt: T0 + 60_000, queue: 'q1', type: 'a' },
          { queue: 'q1', type: 'a' },
        );
        const [s1, s2, s3, s4, a5] = jobs.map((j) => j.id);
        expect(await ids(query({ states: ['scheduled'], queue: 'q1' }))).toEqual([s1, s3, s4]);
        expect(await ids(query({ states: ['scheduled', 'available'], type: 'a' }))).toEqual([a5, s1, s2, s4]);
        const created = { createdAfter: T0 + 2, createdBefore: T0 + 4 };
        expect(await ids(query({ states: ['scheduled'], ...created }))).toEqual([s2, s3, s4]);
        expect(await ids(query({ states: ['scheduled'], ...created }, { order: 'newest' }))).toEqual([s4, s3, s2]);
        expect(await ids(query({ states: ['scheduled', 'available'], queue: 'q1', createdAfter: T0 + 4 }))).toEqual([a5, s4]);
        expect(await ids(query({ states: ['available'], createdBefore: T0 + 4 }))).toEqual([]);
        // Where the listing is by the filtered time, the range ends the listing: no next page past it, whatever the budget.
        const ranged = async (filter: Partial<JobFilter>, order: ListOrder) => {
          const page = await h.store.listJobs(query({ states: ['scheduled'], ...filter }, { order, scanBudget: 1 }));
          return [page.items.map((j) => j.id), page.nextAfter];
        };
        expect(await ranged({ createdBefore: T0 + 1 }, 'oldest')).toEqual([[s1], undefined]);
        expect(await ranged({ createdAfter: T0 + 4 }, 'newest')).toEqual([[s4], undefined]);
      });

      it('filters by the cron schedule that made a job (meta.cron_name), within the scan budget', async () => {
        const jobs = await enqueueInTurn(
          { meta: { cron_name: 'nightly' } },
          { meta: { cron_name: 'hourly' } },
          { meta: {} },
          { meta: { cron_name: 'nightly' }, scheduledAt: T0 + 60_000 },
          { meta: { cron_name: 42 } },
        );
        const [n1, , , n4] = jobs.map((j) => j.id);
        expect(await ids(query({ states: ['available', 'scheduled'], schedule: 'nightly' }))).toEqual([n1, n4]);
        expect(await ids(query({ states: ['available'], schedule: 'weekly' }))).toEqual([]);
        expect(await pages(query({ states: ['available'], schedule: 'nightly' }, { scanBudget: 2 }))).toEqual([[n1], []]);
      });

      it('filters finished jobs by finishing time, error type and dead letter', async () => {
        const [c1, c2, c3] = await enqueueInTurn({}, {}, {});
        await finish([c1!, c2!, c3!], [T0 + 10, T0 + 20, T0 + 30]);
        const finished = { states: ['completed'] as JobState[] };
        expect(await ids(query({ ...finished, finishedAfter: T0 + 15 }))).toEqual([c2!.id, c3!.id]);
        expect(await ids(query({ ...finished, finishedBefore: T0 + 20 }, { order: 'newest' }))).toEqual([c2!.id, c1!.id]);
        expect(await ids(query({ ...finished, finishedAfter: T0 + 20, finishedBefore: T0 + 20 }))).toEqual([c2!.id]);
        const [boom, dead] = await enqueueInTurn({ queue: 'dlq', retry: { maxAttempts: 1 } }, { queue: 'dlq', retry: { maxAttempts: 1 } });
        await finish([boom!], [T0 + 40], { type: 'Boom' });
        await finish([dead!], [T0 + 50], { type: 'Crash', code: 'dead_letter' });
        const discarded = { states: ['discarded'] as JobState[] };
        expect(await ids(query({ ...discarded, errorType: 'Boom' }))).toEqual([boom!.id]);
        expect(await ids(query({ ...discarded, deadLetter: true }))).toEqual([dead!.id]);
        expect(await ids(query({ ...discarded, deadLetter: false }))).toEqual([boom!.id]);
        const [listed] = (await h.store.listJobs(query({ ...discarded, deadLetter: true }))).items;
        expect(listed).toMatchObject({ state: 'discarded', deadLetter: true, errors: [{ type: 'Crash' }] });
      });

      it('examines at most the scan budget per page, continuing from where it stopped', async () => {
        const jobs = await enqueueInTurn({}, {}, {}, {}, {}, { type: 'rare' });
        const filtered = query({ states: ['available'], type: 'rare' }, { scanBudget: 2 });
        const first = await h.store.listJobs(filtered);
        expect(first.items).toEqual([]);
        expect(first.nextAfter).toBeDefined();
        const all = await pages(filtered);
        expect(all.length).toBeGreaterThanOrEqual(3);
        expect(all.flat()).toEqual([jobs[5]!.id]);
      });

      it('keeps a page within its byte budget, a first job always, and finds ids without one', async () => {
        const big = (tag: string) => ({ args: [tag, 'x'.repeat(300_000)] });
        const jobs = (await enqueueInTurn(big('a'), big('b'), big('c'))).map((j) => j.id);
        const budget = query({ states: ['available'] }, { maxBytes: 700_000 });
        const first = await h.store.listJobs(budget);
        expect(first.items.map((j) => j.id)).toEqual(jobs.slice(0, 2));
        expect(await ids({ ...budget, after: first.nextAfter! })).toEqual(jobs.slice(2));
        expect(await ids(query({ states: ['available'] }, { maxBytes: 1 }))).toEqual(jobs.slice(0, 1));
        expect(await h.store.findJobIds(query({ states: ['available'] }, { maxBytes: 1 }))).toEqual({ items: jobs });
        const firstIds = await h.store.findJobIds(query({ states: ['available'] }, { limit: 2 }));
        expect([firstIds.items, firstIds.nextAfter === undefined]).toEqual([jobs.slice(0, 2), false]);
      });

      it('neither repeats nor skips a job that stays in its state while others change between pages', async () => {
        const worker = await h.register();
        const jobs = (await enqueueInTurn({}, {}, {}, {}, { priority: 10 }, {})).map((j) => j.id);
        const [done] = (await enqueueInTurn({ scheduledAt: T0 + 60_000 }, { scheduledAt: T0 + 60_000 })).map((j) => j.id);
        const states: JobState[] = ['available', 'scheduled'];
        const first = await h.store.listJobs(query({ states }, { limit: 2 }));
        expect(first.items.map((j) => j.id)).toEqual([jobs[4], jobs[0]]);
        // A claim takes the prioritized job (already listed), a cancel takes one out, and jobs come in
        // ahead of the cursor (not listed) and behind it (listed).
        expect((await h.claim(worker.workerId, ['default'], 1)).jobs.map((j) => j.id)).toEqual([jobs[4]]);
        await h.store.cancel(jobs[3]!, T0);
        await h.store.cancel(done!, T0);
        const [ahead, behind] = [h.job({ priority: 5 }, { now: T0 + 10 }), h.job({}, { now: T0 + 10 })];
        await h.store.enqueue([ahead, behind]);
        const rest = await pages(query({ states }, { limit: 2, after: first.nextAfter! }));
        const scheduled = (await ids(query({ states: ['scheduled'] }))).at(-1);
        expect([...first.items.map((j) => j.id), ...rest.flat()]).toEqual([
          jobs[4],
          jobs[0],
          jobs[1],
          jobs[2],
          jobs[5],
          behind.id,
          scheduled,
        ]);
      });
    });

    describe('bulk changes', () => {
      async function completedJob(queue: string): Promise<Job> {
        const worker = await h.register({ queues: [queue] });
        await h.enqueue({ queue });
        const [claimed] = (await h.claim(worker.workerId, [queue])).jobs;
        await h.store.ack({ workerId: worker.workerId, items: [{ jobId: claimed!.id, leaseToken: claimed!.lease!.token }], now: T0 });
        return (await h.store.getJob(claimed!.id))!;
      }

      async function failedJob(queue: string, maxAttempts: number): Promise<Job> {
        const worker = await h.register({ queues: [queue] });
        await h.enqueue({ queue, retry: { maxAttempts } });
        const [claimed] = (await h.claim(worker.workerId, [queue])).jobs;
        const outcome = h.outcome(claimed!, { type: 'Boom', message: '' }, T0);
        await h.store.fail({
          workerId: worker.workerId,
          items: [{ jobId: claimed!.id, leaseToken: claimed!.lease!.token, outcome }],
          now: T0,
        });
        return (await h.store.getJob(claimed!.id))!;
      }

      it('cancels each job on its own, one outcome per id, telling the worker of an active one', async () => {
        const worker = await h.register();
        await h.enqueue({});
        const [held] = (await h.claim(worker.workerId, ['default'])).jobs;
        const [scheduled, cancelled] = await h.enqueue({ scheduledAt: T0 + 60_000 }, { queue: 'other' });
        await h.store.cancel(cancelled!.id, T0);
        const completed = await completedJob('done');
        const outcomes = await h.store.cancelJobs({
          jobIds: [held!.id, scheduled!.id, cancelled!.id, completed.id, 'missing'],
          now: T0 + 5,
          actor: 'ops',
          reason: 'cleanup',
        });
        const by = { at: T0 + 5, to: 'cancelled', actor: 'ops', reason: 'cleanup' };
        expect(outcomes).toMatchObject([
          { ok: true, transition: { ...by, jobId: held!.id, from: 'active', workerId: worker.workerId } },
          { ok: true, transition: { ...by, jobId: scheduled!.id, from: 'scheduled' } },
          { ok: true },
          { ok: false, error: { code: 'invalid_state' } },
          { ok: false, error: { code: 'not_found' } },
        ]);
        expect(outcomes[2]).toEqual({ ok: true });
        expect(await h.waitForSignal('jobsCancelled', (s) => s.workerId === worker.workerId)).toMatchObject({ jobIds: [held!.id] });
        expect((await h.store.getWorker(worker.workerId))!.heldJobIds).toEqual([]);
        const recorded = (await h.store.readFacts({ limit: 1_000 })).facts.map((r) => r.fact).slice(-2);
        expect(recorded).toEqual(outcomes.slice(0, 2).map((o) => ({ kind: 'job', ...(o as { transition: object }).transition })));
      });

      it('retries discarded jobs afresh and retryable ones now, refusing others', async () => {
        const discarded = await failedJob('q1', 1);
        const retryable = await failedJob('q2', 5);
        const [available] = await h.enqueue({ queue: 'q3' });
        const outcomes = await h.store.retryJobs({ jobIds: [discarded.id, retryable.id, available!.id, 'missing'], now: T0 + 9 });
        expect(outcomes).toMatchObject([
          { ok: true, transition: { jobId: discarded.id, from: 'discarded', to: 'available', attempt: 0 } },
          { ok: true, transition: { jobId: retryable.id, from: 'retryable', to: 'available', attempt: 1 } },
          { ok: false, error: { code: 'invalid_state' } },
          { ok: false, error: { code: 'not_found' } },
        ]);
        expect(await h.store.getJob(discarded.id)).toMatchObject({ state: 'available', attempt: 0, errors: [], enqueuedAt: T0 + 9 });
        expect(await h.store.getJob(retryable.id)).toMatchObject({
          state: 'available',
          attempt: 1,
          errors: [{ type: 'Boom' }],
          enqueuedAt: T0 + 9,
        });
        expect((await h.store.getJob(retryable.id))!.nextRetryAt).toBeUndefined();
        expect((await h.store.promoteDue(T0 + 3_600_000, 10)).transitions).toEqual([]);
      });

      it('deletes finished jobs and every trace of them, refusing unfinished ones', async () => {
        const completed = await completedJob('gone');
        const discarded = await failedJob('gone', 1);
        const [cancelled, waiting] = await h.enqueue({ queue: 'gone' }, { queue: 'kept' });
        await h.store.cancel(cancelled!.id, T0);
        const before = (await h.store.readFacts({ limit: 1_000 })).facts;
        const outcomes = await h.store.deleteJobs({
          jobIds: [completed.id, discarded.id, cancelled!.id, waiting!.id, 'missing'],
          now: T0 + 1,
        });
        expect(outcomes).toMatchObject([
          { ok: true },
          { ok: true },
          { ok: true },
          { ok: false, error: { code: 'invalid_state' } },
          { ok: false, error: { code: 'not_found' } },
        ]);
        expect(outcomes.slice(0, 3)).toEqual([{ ok: true }, { ok: true }, { ok: true }]);
        expect(await h.store.getJobs([completed.id, discarded.id, cancelled!.id])).toEqual([undefined, undefined, undefined]);
        expect((await h.store.listQueues({ limit: 10 })).items.map((c) => c.queue)).toEqual(['kept']);
        const finished: JobState[] = ['completed', 'cancelled', 'discarded'];
        const listing = {
          filter: { states: finished },
          order: 'oldest',
          limit: 10,
          maxBytes: DELIVERY_BUDGET_BYTES,
          scanBudget: 100,
        } as const;
        expect(await h.store.listJobs(listing)).toEqual({ items: [] });
        expect((await h.store.queueStats('gone', T0)).counts).toMatchObject({ completed: 0, cancelled: 0, discarded: 0 });
        expect((await h.store.readFacts({ limit: 1_000 })).facts).toEqual(before);
        expect(await h.store.pruneTerminal(T0 + 10 * 86_400_000, { completedMs: 0, cancelledMs: 0, discardedMs: 0, maxJobs: 0 }, 10)).toBe(
          0,
        );
        // The id is free again, and the new job is listed once (queue by queue: gone, then kept).
        await h.store.enqueue([{ ...h.job({ queue: 'gone' }, { now: T0 + 1 }), id: cancelled!.id }]);
        expect((await h.store.listJobs({ ...listing, filter: { states: ['available'] } })).items.map((j) => j.id)).toEqual([
          cancelled!.id,
          waiting!.id,
        ]);
      });
    });

    describe('queue pause', () => {
      it("delivers nothing from a paused queue while it takes enqueues and the worker's other queues deliver", async () => {
        const worker = await h.register({ queues: ['paused-q', 'open-q'] });
        expect(await h.store.setQueuePaused({ queue: 'paused-q', paused: true, now: T0 })).toEqual({ changed: true });
        expect(await h.store.setQueuePaused({ queue: 'paused-q', paused: true, now: T0 })).toEqual({ changed: false });
        const [held, open] = await h.enqueue({ queue: 'paused-q' }, { queue: 'open-q' });
        expect((await h.claim(worker.workerId, ['paused-q', 'open-q'])).jobs.map((j) => j.id)).toEqual([open!.id]);
        expect(await h.state(held!.id)).toBe('available');
        expect((await h.store.listQueues({ limit: 10 })).items).toEqual([
          expect.objectContaining({ queue: 'open-q', paused: false, active: 1 }),
          expect.objectContaining({ queue: 'paused-q', paused: true, available: 1, oldestAvailableAt: T0 }),
        ]);
      });

      it('signals the available jobs of a queue when it resumes, so that they are claimed at once', async () => {
        const worker = await h.register({ queues: ['q'] });
        await h.store.setQueuePaused({ queue: 'q', paused: true, now: T0 });
        await h.enqueue({ queue: 'q' });
        await h.enqueue({ queue: 'q' });
        expect(await h.store.setQueuePaused({ queue: 'q', paused: false, now: T0 + 1 })).toEqual({ changed: true });
        await h.waitForSignal('jobsAvailable', (s) => s.queue === 'q' && s.count === 2);
        expect((await h.claim(worker.workerId, ['q'])).jobs).toHaveLength(2);
      });

      it('lists a paused queue even when it holds no jobs, and forgets it once resumed', async () => {
        await h.store.setQueuePaused({ queue: 'idle', paused: true, now: T0 });
        const [job] = await h.enqueue({ queue: 'idle' });
        await h.store.cancel(job!.id, T0);
        await h.store.pruneTerminal(T0 + 1, { completedMs: 0, cancelledMs: 0, discardedMs: 0, maxJobs: 0 }, 10);
        expect((await h.store.listQueues({ limit: 10 })).items).toEqual([
          expect.objectContaining({ queue: 'idle', paused: true, cancelled: 0 }),
        ]);
        expect((await h.store.queueStats('idle', T0)).counts).toMatchObject({ queue: 'idle', paused: true });
        await h.store.setQueuePaused({ queue: 'idle', paused: false, now: T0 + 2 });
        expect(await h.store.listQueues({ limit: 10 })).toEqual({ items: [] });
      });

      it('gives every listed queue the time the job that runs next became available', async () => {
        const worker = await h.register({ queues: ['q'] });
        await h.store.enqueue([h.job({ queue: 'q' }, { now: T0 + 5 })]);
        await h.store.enqueue([h.job({ queue: 'q' }, { now: T0 + 9 })]);
        await h.store.enqueue([h.job({ queue: 'q', priority: 1 }, { now: T0 + 12 })]);
        const counts = async () => (await h.store.listQueues({ limit: 10 })).items[0]!;
        // The prioritized job runs next: the queue's lag is how long it has waited.
        expect((await counts()).oldestAvailableAt).toBe(T0 + 12);
        await h.claim(worker.workerId, ['q'], 1, T0 + 20);
        expect((await counts()).oldestAvailableAt).toBe(T0 + 5);
        await h.claim(worker.workerId, ['q'], 2, T0 + 20);
        expect((await counts()).oldestAvailableAt).toBeUndefined();
        expect((await h.store.queueStats('q', T0 + 20)).counts.oldestAvailableAt).toBeUndefined();
      });
    });

    describe('queue limits', () => {
      const ids = (result: { jobs: Job[] }) => result.jobs.map((j) => j.id);

      it('keeps limits per queue, shows them in stats and listings, and clears them', async () => {
        await h.enqueue({ queue: 'limited' });
        await h.store.setQueueLimits({ queue: 'limited', limits: { maxActive: 2, rate: { limit: 5, periodMs: 1_000 } }, now: T0 });
        await h.store.setQueueLimits({ queue: 'idle', limits: { maxActive: 0 }, now: T0 });
        const limits = { maxActive: 2, rate: { limit: 5, periodMs: 1_000 } };
        expect((await h.store.queueStats('limited', T0)).counts.limits).toEqual(limits);
        expect((await h.store.queueStats('idle', T0)).counts.limits).toEqual({ maxActive: 0 });
        expect((await h.store.listQueues({ limit: 10 })).items).toEqual([expect.objectContaining({ queue: 'limited', limits })]);
        await h.store.setQueueLimits({ queue: 'limited', now: T0 });
        await h.store.setQueueLimits({ queue: 'idle', limits: {}, now: T0 });
        expect((await h.store.queueStats('limited', T0)).counts.limits).toBeUndefined();
        expect((await h.store.queueStats('idle', T0)).counts.limits).toBeUndefined();
      });

      it("never lets more of a queue's jobs be active than its max active, whichever worker claims", async () => {
        const [a, b] = [await h.register({ queues: ['q', 'other'] }), await h.register({ queues: ['q'] })];
        await h.store.setQueueLimits({ queue: 'q', limits: { maxActive: 2 }, now: T0 });
        const jobs = await h.enqueue({ queue: 'q' }, { queue: 'q' }, { queue: 'q' }, { queue: 'other' });
        const first = await h.claim(a.workerId, ['q', 'other']);
        // The held-back job is skipped, the worker's other queue still delivers.
        expect(ids(first)).toEqual([jobs[0]!.id, jobs[1]!.id, jobs[3]!.id]);
        expect(first.heldBackByRate).toEqual([]);
        expect((await h.claim(b.workerId, ['q'])).jobs).toEqual([]);
        expect(await h.state(jobs[2]!.id)).toBe('available');
        const done = first.jobs[0]!;
        await h.store.ack({ workerId: a.workerId, items: [{ jobId: done.id, leaseToken: done.lease!.token }], now: T0 + 1 });
        expect(ids(await h.claim(b.workerId, ['q'], 100, T0 + 1))).toEqual([jobs[2]!.id]);
      });

      it('starts at most the rate limit in any window (a sliding log) and says when the window reopens', async () => {
        const worker = await h.register({ queues: ['q'] });
        await h.store.setQueueLimits({ queue: 'q', limits: { rate: { limit: 3, periodMs: 1_000 } }, now: T0 });
        const jobs = await h.enqueue(...Array.from({ length: 6 }, () => ({ queue: 'q' })));
        expect(ids(await h.claim(worker.workerId, ['q'], 1, T0))).toEqual([jobs[0]!.id]);
        const second = await h.claim(worker.workerId, ['q'], 100, T0 + 400);
        expect(ids(second)).toEqual([jobs[1]!.id, jobs[2]!.id]);
        expect(second.heldBackByRate).toEqual([{ queue: 'q', opensAt: T0 + 1_000 }]);
        const held = await h.claim(worker.workerId, ['q'], 100, T0 + 999);
        expect(held.jobs).toEqual([]);
        expect(held.heldBackByRate).toEqual([{ queue: 'q', opensAt: T0 + 1_000 }]);
        expect(await h.state(jobs[3]!.id)).toBe('available');
        // The start at T0 left the window: one slot; the two at T0 + 400 leave it at T0 + 1400.
        const reopened = await h.claim(worker.workerId, ['q'], 100, T0 + 1_000);
        expect(ids(reopened)).toEqual([jobs[3]!.id]);
        expect(reopened.heldBackByRate).toEqual([{ queue: 'q', opensAt: T0 + 1_400 }]);
        expect(ids(await h.claim(worker.workerId, ['q'], 100, T0 + 1_400))).toEqual([jobs[4]!.id, jobs[5]!.id]);
      });

      it('starts the jobs of a claim that read the clock before the newest logged start at that start', async () => {
        // Replicas read the clock before their claims run, so claims may reach the store out of clock order.
        const [a, b] = [await h.register({ queues: ['q'] }), await h.register({ queues: ['q'] })];
        await h.store.setQueueLimits({ queue: 'q', limits: { rate: { limit: 3, periodMs: 1_000 } }, now: T0 });
        const jobs = await h.enqueue(...Array.from({ length: 5 }, () => ({ queue: 'q' })));
        expect((await h.claim(a.workerId, ['q'], 2, T0)).jobs).toHaveLength(2);
        expect((await h.claim(a.workerId, ['q'], 1, T0 + 1)).jobs).toHaveLength(1);
        // The starts at T0 left this claim's window; it takes one of the two slots.
        expect(ids(await h.claim(a.workerId, ['q'], 1, T0 + 1_000))).toEqual([jobs[3]!.id]);
        // At T0 + 999 both starts at T0 would still count: starting there would put four in one window.
        const late = await h.claim(b.workerId, ['q'], 100, T0 + 999);
        expect(late.jobs.map((j) => [j.id, j.startedAt])).toEqual([[jobs[4]!.id, T0 + 1_000]]);
      });

      it('reports no held-back queue when the window is full but nothing waits', async () => {
        const worker = await h.register({ queues: ['q'] });
        await h.store.setQueueLimits({ queue: 'q', limits: { rate: { limit: 1, periodMs: 1_000 } }, now: T0 });
        await h.enqueue({ queue: 'q' });
        expect((await h.claim(worker.workerId, ['q'])).heldBackByRate).toEqual([]);
        expect((await h.claim(worker.workerId, ['q'], 100, T0 + 1)).heldBackByRate).toEqual([]);
      });

      it('counts the starts already made against a lowered rate, and forgets them with the rate', async () => {
        const worker = await h.register({ queues: ['q'] });
        await h.store.setQueueLimits({ queue: 'q', limits: { rate: { limit: 10, periodMs: 1_000 } }, now: T0 });
        await h.enqueue(...Array.from({ length: 6 }, () => ({ queue: 'q' })));
        expect((await h.claim(worker.workerId, ['q'], 3, T0)).jobs).toHaveLength(3);
        await h.store.setQueueLimits({ queue: 'q', limits: { rate: { limit: 2, periodMs: 1_000 } }, now: T0 + 1 });
        const held = await h.claim(worker.workerId, ['q'], 100, T0 + 1);
        expect(held.jobs).toEqual([]);
        expect(held.heldBackByRate).toEqual([{ queue: 'q', opensAt: T0 + 1_000 }]);
        await h.store.setQueueLimits({ queue: 'q', now: T0 + 2 });
        expect((await h.claim(worker.workerId, ['q'], 100, T0 + 2)).jobs).toHaveLength(3);
      });

      it('signals the available jobs of a queue whose limits change, so that waiting streams claim under them', async () => {
        await h.enqueue({ queue: 'q' }, { queue: 'q' });
        await h.store.setQueueLimits({ queue: 'q', limits: { maxActive: 5 }, now: T0 });
        await h.waitForSignal('jobsAvailable', (s) => s.queue === 'q' && s.count === 2);
      });

      describe('rate limit events', () => {
        /** The rate-limit facts and job starts recorded after `after`, in order. */
        async function limitFacts(after: string | undefined): Promise<unknown[]> {
          const { facts } = await h.store.readFacts({ ...(after === undefined ? {} : { after }), limit: 1_000 });
          return facts.flatMap(({ fact }): unknown[] => {
            if (fact.kind === 'rate_limit') return [fact];
            return fact.kind === 'job' && fact.to === 'active' ? [['started', fact.jobId]] : [];
          });
        }
        const lastCursor = async (): Promise<string | undefined> => (await h.store.readFacts({ limit: 1_000 })).facts.at(-1)?.cursor;
        const exceeded = (at: number, strategy: string, limit: number, current: number) => ({
          kind: 'rate_limit',
          at,
          queue: 'q',
          change: 'exceeded',
          strategy,
          limit,
          current,
        });
        const released = (at: number, strategy: string, jobId?: string) => ({
          kind: 'rate_limit',
          at,
          queue: 'q',
          change: 'released',
          strategy,
          ...(jobId === undefined ? {} : { jobId }),
        });

        it('records one exceeded when the rate holds back jobs a claim wanted, and a released before the next start', async () => {
          const [a, b] = [await h.register({ queues: ['q'] }), await h.register({ queues: ['q'] })];
          await h.store.setQueueLimits({ queue: 'q', limits: { rate: { limit: 2, periodMs: 1_000 } }, now: T0 });
          const jobs = await h.enqueue(...Array.from({ length: 5 }, () => ({ queue: 'q' })));
          const start = await lastCursor();
          expect((await h.claim(a.workerId, ['q'], 100, T0)).jobs).toHaveLength(2);
          // Held back again within the episode, by any worker: nothing more is told.
          expect((await h.claim(b.workerId, ['q'], 100, T0 + 500)).jobs).toEqual([]);
          expect((await h.claim(a.workerId, ['q'], 100, T0 + 999)).jobs).toEqual([]);
          expect((await h.claim(b.workerId, ['q'], 100, T0 + 1_000)).jobs).toHaveLength(2);
          expect(await limitFacts(start)).toEqual([
            ['started', jobs[0]!.id],
            ['started', jobs[1]!.id],
            exceeded(T0, 'rate', 2, 2),
            released(T0 + 1_000, 'rate', jobs[2]!.id),
            ['started', jobs[2]!.id],
            ['started', jobs[3]!.id],
            // The window of the first exceeded has passed: the next hold is told.
            exceeded(T0 + 1_000, 'rate', 2, 2),
          ]);
        });

        it('tells at most one exceeded per window for max active, and a released when the limits are cleared', async () => {
          const [a, b] = [await h.register({ queues: ['q'] }), await h.register({ queues: ['q'] })];
          await h.store.setQueueLimits({ queue: 'q', limits: { maxActive: 1 }, now: T0 });
          const jobs = await h.enqueue(...Array.from({ length: 4 }, () => ({ queue: 'q' })));
          const start = await lastCursor();
          const [first] = (await h.claim(a.workerId, ['q'], 100, T0)).jobs;
          expect((await h.claim(b.workerId, ['q'], 100, T0 + 1)).jobs).toEqual([]);
          await h.store.ack({ workerId: a.workerId, items: [{ jobId: first!.id, leaseToken: first!.lease!.token }], now: T0 + 2 });
          const [second] = (await h.claim(b.workerId, ['q'], 100, T0 + 3)).jobs;
          // Held back again within the second of the first exceeded: not told, and no episode to release.
          expect((await h.claim(a.workerId, ['q'], 100, T0 + 999)).jobs).toEqual([]);
          expect((await h.claim(a.workerId, ['q'], 100, T0 + 1_000)).jobs).toEqual([]);
          expect((await h.claim(b.workerId, ['q'], 100, T0 + 1_500)).jobs).toEqual([]);
          await h.store.setQueueLimits({ queue: 'q', now: T0 + 1_600 });
          expect(await limitFacts(start)).toEqual([
            ['started', jobs[0]!.id],
            exceeded(T0, 'concurrency', 1, 1),
            released(T0 + 3, 'concurrency', second!.id),
            ['started', jobs[1]!.id],
            exceeded(T0 + 1_000, 'concurrency', 1, 1),
            released(T0 + 1_600, 'concurrency'),
          ]);
        });

        it('tells nothing when the claim wanted no more than its limits gave, or no job waited', async () => {
          const [small, other] = [await h.register({ queues: ['q'], concurrency: 2 }), await h.register({ queues: ['q'] })];
          await h.store.setQueueLimits({ queue: 'q', limits: { maxActive: 2, rate: { limit: 3, periodMs: 60_000 } }, now: T0 });
          const jobs = await h.enqueue({ queue: 'q' }, { queue: 'q' }, { queue: 'q' });
          const start = await lastCursor();
          // Full at the limit: the waiting job was not held back from this worker.
          expect((await h.claim(small.workerId, ['q'], 100, T0)).jobs).toHaveLength(2);
          const held = (await h.claim(small.workerId, ['q'], 100, T0 + 1)).jobs;
          expect(held).toEqual([]);
          // Another worker wanted it: max active held it back (the rate had a slot left).
          expect((await h.claim(other.workerId, ['q'], 100, T0 + 2)).jobs).toEqual([]);
          await h.store.cancel(jobs[2]!.id, T0 + 3);
          // Nothing waits: whatever the limits say, nothing was held back.
          expect((await h.claim(other.workerId, ['q'], 100, T0 + 60_000)).jobs).toEqual([]);
          expect(await limitFacts(start)).toEqual([
            ['started', jobs[0]!.id],
            ['started', jobs[1]!.id],
            exceeded(T0 + 2, 'concurrency', 2, 2),
          ]);
        });
      });
    });

    describe('queue stats', () => {
      const MINUTE = 60_000;

      it('counts completed, failed and discarded jobs per minute over the last hour', async () => {
        const worker = await h.register();
        const [done, alsoDone, retried, dead] = await h.enqueue({}, {}, {}, { retry: { maxAttempts: 1 } });
        await h.enqueue({ queue: 'other', expiresAt: T0 + 2 * MINUTE + 5 });
        const [cancelled] = await h.enqueue({ queue: 'other' });
        const claimed = (await h.claim(worker.workerId, ['default'], 4, T0 + 1)).jobs;
        const lease = (id: string) => claimed.find((j) => j.id === id)!.lease!.token;
        // Two completions in one call: both count.
        const items = [done!, alsoDone!].map((job) => ({ jobId: job.id, leaseToken: lease(job.id) }));
        await h.store.ack({ workerId: worker.workerId, items, now: T0 + 10 });
        for (const [job, now] of [
          [retried!, T0 + MINUTE + 1],
          [dead!, T0 + MINUTE + 2],
        ] as const) {
          const outcome = h.outcome(
            claimed.find((j) => j.id === job.id)!,
            { type: 'Boom', message: '' },
            now,
          );
          await h.store.fail({ workerId: worker.workerId, items: [{ jobId: job.id, leaseToken: lease(job.id), outcome }], now });
        }
        await h.expireWaiting(T0 + 2 * MINUTE + 5);
        await h.store.cancel(cancelled!.id, T0 + 2 * MINUTE + 6);
        const stats = await h.store.queueStats('default', T0 + 59 * MINUTE + 7);
        expect(stats.counts).toMatchObject({ queue: 'default', paused: false, completed: 2, retryable: 1, discarded: 1 });
        expect(stats.minutes).toHaveLength(60);
        expect(stats.minutes.map((m) => m.minute)).toEqual(Array.from({ length: 60 }, (_, i) => T0 + i * MINUTE));
        expect(stats.minutes.slice(0, 3)).toEqual([
          { minute: T0, completed: 2, failed: 0, discarded: 0 },
          { minute: T0 + MINUTE, completed: 0, failed: 2, discarded: 1 },
          { minute: T0 + 2 * MINUTE, completed: 0, failed: 0, discarded: 0 },
        ]);
        expect(stats.minutes.slice(3).every((m) => m.completed + m.failed + m.discarded === 0)).toBe(true);
        const other = await h.store.queueStats('other', T0 + 2 * MINUTE + 7);
        expect(other.minutes.at(-1)).toEqual({ minute: T0 + 2 * MINUTE, completed: 0, failed: 0, discarded: 1 });
        const hourLater = await h.store.queueStats('default', T0 + 60 * MINUTE);
        expect(hourLater.minutes[0]).toEqual({ minute: T0 + MINUTE, completed: 0, failed: 2, discarded: 1 });
      });

      it('answers zero counts for a queue that holds no jobs', async () => {
        const stats = await h.store.queueStats('nothing-here', T0 + 30_000);
        expect(stats.counts).toEqual({
          queue: 'nothing-here',
          paused: false,
          scheduled: 0,
          available: 0,
          pending: 0,
          active: 0,
          completed: 0,
          retryable: 0,
          cancelled: 0,
          discarded: 0,
        });
        expect(stats.minutes).toEqual(
          Array.from({ length: 60 }, (_, i) => ({ minute: T0 - 59 * MINUTE + i * MINUTE, completed: 0, failed: 0, discarded: 0 })),
        );
      });
    });
  });
}
