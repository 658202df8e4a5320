import { ANONYMOUS } from '../../../src/domain/principal';
import { DEFAULT_RETENTION } from '../../../src/domain/retention';
import { objectContaining } from '../../support/matchers';
import { AppHarness, SETTINGS } from './app-harness';

describe('Recovery', () => {
  let h: AppHarness;

  beforeEach(async () => {
    h = new AppHarness();
    await h.register('w1');
  });

  afterEach(async () => {
    await h.stop();
  });

  describe('promoteDue', () => {
    it('makes a scheduled job available when its time comes, not before', async () => {
      const job = await h.enqueue({ scheduledAt: h.clock.now() + 10_000 });
      h.clock.advance(9_999);
      expect(await h.app.recovery.promoteDue()).toEqual({ promoted: 0, nextDueAt: h.clock.now() + 1 });

      h.clock.advance(1);

      expect(await h.app.recovery.promoteDue()).toEqual({ promoted: 1, nextDueAt: undefined });
      expect(await h.job(job.id)).toMatchObject({ state: 'available', enqueuedAt: h.clock.now() });
      expect(h.telemetry.pathOf(job.id)).toEqual(['none>scheduled', 'scheduled>available']);
    });

    it('makes a retryable job available once its backoff has passed', async () => {
      const job = await h.enqueue();
      const claimed = await h.claimOne('w1');
      await h.app.settlement.fail(ANONYMOUS, 'w1', [
        { jobId: job.id, leaseToken: claimed.lease!.token, report: { type: 'boom', message: '', backtrace: [] } },
      ]);
      h.clock.advance(999);
      expect(await h.app.recovery.promoteDue()).toEqual({ promoted: 0, nextDueAt: h.clock.now() + 1 });

      h.clock.advance(1);

      expect(await h.app.recovery.promoteDue()).toEqual({ promoted: 1, nextDueAt: undefined });
      expect(await h.job(job.id)).toMatchObject({ state: 'available', attempt: 1 });
    });
  });

  describe('expireWaiting', () => {
    it('discards a job that waited past its enqueue TTL, with a job.ttl_expired event', async () => {
      const job = await h.enqueue({ enqueueTtlSeconds: 5 });
      h.clock.advance(4_999);
      expect(await h.app.recovery.expireWaiting()).toBe(0);

      h.clock.advance(1);

      expect(await h.app.recovery.expireWaiting()).toBe(1);
      expect(await h.job(job.id)).toMatchObject({ state: 'discarded', error: { type: 'enqueue_ttl_expired', attempt: 0 } });
      expect(await h.timeoutEvents()).toEqual([
        {
          type: 'job.ttl_expired',
          jobId: job.id,
          data: objectContaining({ timeout_kind: 'enqueue_ttl', limit_seconds: 5, elapsed_seconds: 5 }),
        },
      ]);
    });

    it('discards a waiting job past its total timeout, with a job.total_timeout event', async () => {
      const job = await h.enqueue({ scheduledAt: h.clock.now() + 600_000, totalTimeoutSeconds: 120 });
      h.clock.advance(120_000);

      expect(await h.app.recovery.expireWaiting()).toBe(1);
      expect(await h.job(job.id)).toMatchObject({ state: 'discarded', error: { type: 'total_timeout' } });
      expect(await h.timeoutEvents()).toEqual([objectContaining({ type: 'job.total_timeout', jobId: job.id })]);
    });

    it('discards a job past its expires_at without a timeout event', async () => {
      const job = await h.enqueue({ expiresAt: h.clock.now() + 1_000 });
      h.clock.advance(1_000);

      expect(await h.app.recovery.expireWaiting()).toBe(1);
      expect(await h.job(job.id)).toMatchObject({ state: 'discarded', error: { type: 'expired' } });
      expect(await h.timeoutEvents()).toEqual([]);
    });

    it('holds a job to its enqueue TTL only until its first attempt', async () => {
      const job = await h.enqueue({ enqueueTtlSeconds: 5 });
      const claimed = await h.claimOne('w1');
      await h.app.settlement.fail(ANONYMOUS, 'w1', [
        { jobId: job.id, leaseToken: claimed.lease!.token, report: { type: 'boom', message: '', backtrace: [] } },
      ]);
      h.clock.advance(10_000);

      expect(await h.app.recovery.expireWaiting()).toBe(0);
      expect((await h.job(job.id)).state).toBe('retryable');
    });
  });

  describe('signalSoftTimeouts', () => {
    it('tells the worker, once, to stop a job whose execution timeout passed, leaving it active for the grace period', async () => {
      const job = await h.enqueue({ timeoutSeconds: 10 });
      await h.claimOne('w1');
      const beats = h.listen('w1');
      h.clock.advance(9_999);
      expect(await h.app.recovery.signalSoftTimeouts()).toBe(0);

      h.clock.advance(1);

      expect(await h.app.recovery.signalSoftTimeouts()).toBe(1);
      expect(beats.timedOutJobIds).toEqual([job.id]);
      expect((await h.job(job.id)).state).toBe('active');
      expect(await h.app.recovery.signalSoftTimeouts()).toBe(0);
    });
  });

  describe('reclaimExpiredLeases', () => {
    /** Enqueues and claims a job for w1, and confirms it with a beat, as a worker that received it would. */
    async function heldJob(submission: Parameters<AppHarness['enqueue']>[0]): Promise<string> {
      const job = await h.enqueue(submission);
      await h.claimOne('w1');
      await h.beat('w1', [job.id]);
      return job.id;
    }

    it('fails an attempt that outlived its execution timeout and grace period as timeout, and tells the worker', async () => {
      const jobId = await heldJob({ timeoutSeconds: 10, gracePeriodSeconds: 5 });
      const beats = h.listen('w1');
      h.clock.advance(14_999);
      expect(await h.app.recovery.reclaimExpiredLeases()).toBe(0);

      h.clock.advance(1);

      expect(await h.app.recovery.reclaimExpiredLeases()).toBe(1);
      expect(await h.job(jobId)).toMatchObject({ state: 'retryable', attempt: 1, error: { type: 'timeout' } });
      expect(await h.timeoutEvents()).toEqual([
        { type: 'job.timeout', jobId, data: objectContaining({ worker_id: 'w1', limit_seconds: 10 }) },
      ]);
      expect(beats.reclaimedJobIds).toEqual([jobId]);
      expect((await h.app.workers.get('w1')).heldJobIds).toEqual([]);
    });

    it('fails an attempt no heartbeat mentioned for the job heartbeat timeout as stalled', async () => {
      const jobId = await heldJob({ heartbeatTimeoutSeconds: 5 });
      h.clock.advance(5_000);

      expect(await h.app.recovery.reclaimExpiredLeases()).toBe(1);
      expect((await h.job(jobId)).error).toMatchObject({ type: 'stalled' });
      expect(await h.timeoutEvents()).toEqual([objectContaining({ type: 'job.stalled', jobId })]);
    });

    it('fails an attempt whose visibility timeout lapsed as visibility_timeout, without a timeout event', async () => {
      const jobId = await heldJob({ visibilityTimeoutSeconds: 5 });
      h.clock.advance(5_000);

      expect(await h.app.recovery.reclaimExpiredLeases()).toBe(1);
      expect(await h.job(jobId)).toMatchObject({ state: 'retryable', error: { type: 'visibility_timeout' } });
      expect(await h.timeoutEvents()).toEqual([]);
    });

    it('discards a job whose total timeout passed while it ran, with a job.total_timeout event', async () => {
      const jobId = await heldJob({ totalTimeoutSeconds: 60, retry: { maxAttempts: 5 } });
      h.clock.advance(60_000);

      expect(await h.app.recovery.reclaimExpiredLeases()).toBe(1);
      expect(await h.job(jobId)).toMatchObject({ state: 'discarded', error: { type: 'total_timeout' } });
      expect(await h.timeoutEvents()).toEqual([objectContaining({ type: 'job.total_timeout', jobId })]);
    });

    it('leaves alone a lease that beats kept renewing', async () => {
      const jobId = await heldJob({ heartbeatTimeoutSeconds: 5 });
      h.clock.advance(4_000);
      await h.beat('w1', [jobId]);
      h.clock.advance(4_000);

      expect(await h.app.recovery.reclaimExpiredLeases()).toBe(0);
      expect((await h.job(jobId)).state).toBe('active');
    });

    it('returns a delivery its beating worker never confirmed to the queue without spending an attempt', async () => {
      const job = await h.enqueue();
      await h.claimOne('w1');
      h.clock.advance(1_000);
      await h.beat('w1', []);
      h.clock.advance(SETTINGS.heartbeatTimeoutMs - 1_000);

      expect(await h.app.recovery.reclaimExpiredLeases()).toBe(1);
      expect(await h.job(job.id)).toMatchObject({ state: 'available', attempt: 0, errors: [] });
      expect(h.telemetry.pathOf(job.id)).toEqual(['none>available', 'available>active', 'active>available']);
    });

    it('leaves an unconfirmed delivery of a silent worker to the dead-worker pass, which spends its attempt', async () => {
      const job = await h.enqueue();
      await h.claimOne('w1');
      h.clock.advance(SETTINGS.heartbeatTimeoutMs);

      expect(await h.app.recovery.reclaimExpiredLeases()).toBe(0);
      expect((await h.job(job.id)).state).toBe('active');

      h.clock.advance(1);
      expect(await h.app.recovery.removeDeadWorkers()).toBe(1);
      expect(await h.job(job.id)).toMatchObject({ state: 'available', attempt: 1, error: { type: 'worker_death' } });
    });
  });

  describe('removeDeadWorkers', () => {
    it('declares a worker silent past the heartbeat timeout dead and requeues its jobs as worker_death', async () => {
      const job = await h.enqueue();
      await h.claimOne('w1');
      const beats = h.listen('w1');
      h.clock.advance(SETTINGS.heartbeatTimeoutMs + 1);

      expect(await h.app.recovery.removeDeadWorkers()).toBe(1);

      expect(await h.job(job.id)).toMatchObject({ state: 'available', attempt: 1, error: { type: 'worker_death' } });
      await expect(h.app.workers.get('w1')).rejects.toMatchObject({ code: 'not_found' });
      expect(beats.isRemoved).toBe(true);
      expect(h.telemetry.workerTransitions.at(-1)).toEqual({ workerId: 'w1', from: 'running', to: 'terminated', reason: 'dead' });
    });

    it('spares a worker that beat within the heartbeat timeout', async () => {
      h.clock.advance(2_000);
      await h.beat('w1');
      h.clock.advance(2_000);

      expect(await h.app.recovery.removeDeadWorkers()).toBe(0);
      expect((await h.app.workers.get('w1')).worker.state).toBe('running');
    });
  });

  describe('pruneTerminal', () => {
    it('removes a completed job once its retention has passed', async () => {
      const job = await h.enqueue();
      const claimed = await h.claimOne('w1');
      await h.app.settlement.ack(ANONYMOUS, 'w1', [{ jobId: job.id, leaseToken: claimed.lease!.token }]);
      h.clock.advance(DEFAULT_RETENTION.completedMs - 1);
      expect(await h.app.recovery.pruneTerminal()).toBe(0);

      h.clock.advance(1);

      expect(await h.app.recovery.pruneTerminal()).toBe(1);
      await expect(h.job(job.id)).rejects.toMatchObject({ code: 'not_found' });
    });
  });

  describe('heartbeatAges', () => {
    it('reports per queue how long ago its stalest active job showed signs of life', async () => {
      const job = await h.enqueue();
      await h.claimOne('w1');
      h.clock.advance(7_000);

      expect(await h.app.recovery.heartbeatAges()).toEqual([{ queue: 'default', ageMs: 7_000 }]);

      await h.beat('w1', [job.id]);
      expect(await h.app.recovery.heartbeatAges()).toEqual([{ queue: 'default', ageMs: 0 }]);
    });
  });
});
