import { ANONYMOUS } from '../../../src/domain/principal';
import { uuidv7 } from 'uuidv7';
import { OjsError } from '../../../src/domain/errors';
import type { SettlementOutcome } from '../../../src/store/job-store';
import { objectContaining } from '../../support/matchers';
import { AppHarness } from './app-harness';

/** An outcome as `{ ok }` or `{ ok, code }`, so that a batch's answers compare at a glance. */
function summary(outcome: SettlementOutcome): { ok: boolean; code?: string } {
  if (outcome.ok) return { ok: true };
  return { ok: false, code: outcome.error instanceof OjsError ? outcome.error.code : outcome.error.message };
}

const BOOM = { type: 'boom', message: 'it broke', backtrace: [] };

describe('Settlement', () => {
  let h: AppHarness;

  beforeEach(async () => {
    h = new AppHarness();
    await h.register('w1');
    await h.register('w2');
  });

  afterEach(async () => {
    await h.stop();
  });

  describe('ack', () => {
    it('completes a held job with its result and records the transition', async () => {
      const job = await h.enqueue();
      const claimed = await h.claimOne('w1');
      h.clock.advance(2_000);

      const [outcome] = await h.app.settlement.ack(ANONYMOUS, 'w1', [
        { jobId: job.id, leaseToken: claimed.lease!.token, result: { sent: 3 } },
      ]);

      expect(outcome).toMatchObject({ ok: true, transition: { jobId: job.id, from: 'active', to: 'completed', workerId: 'w1' } });
      expect(await h.job(job.id)).toMatchObject({ state: 'completed', result: { sent: 3 }, completedAt: h.clock.now() });
      expect((await h.app.workers.get('w1')).heldJobIds).toEqual([]);
      expect(h.telemetry.pathOf(job.id)).toEqual(['none>available', 'available>active', 'active>completed']);
    });

    it('refuses an ack from a worker that does not hold the job, which stays active', async () => {
      const job = await h.enqueue();
      const claimed = await h.claimOne('w1');

      const outcomes = await h.app.settlement.ack(ANONYMOUS, 'w2', [{ jobId: job.id, leaseToken: claimed.lease!.token }]);

      expect(outcomes.map(summary)).toEqual([{ ok: false, code: 'invalid_state' }]);
      expect((await h.job(job.id)).state).toBe('active');
    });

    it('refuses an ack carrying the lease token of an earlier attempt', async () => {
      const job = await h.enqueue();
      const first = await h.claimOne('w1');
      await h.app.settlement.fail(ANONYMOUS, 'w1', [{ jobId: job.id, leaseToken: first.lease!.token, report: BOOM }]);
      h.clock.advance(1_000);
      await h.app.recovery.promoteDue();
      await h.claimOne('w1');

      const outcomes = await h.app.settlement.ack(ANONYMOUS, 'w1', [{ jobId: job.id, leaseToken: first.lease!.token }]);

      expect(outcomes.map(summary)).toEqual([{ ok: false, code: 'invalid_state' }]);
      expect(await h.job(job.id)).toMatchObject({ state: 'active', attempt: 2 });
    });

    it('settles each item of a batch on its own: a stale lease or an unknown job spoils nothing else', async () => {
      const a = await h.enqueue();
      const b = await h.enqueue();
      const [claimedA] = await h.claim('w1');
      const unknownId = uuidv7();

      const outcomes = await h.app.settlement.ack(ANONYMOUS, 'w1', [
        { jobId: a.id, leaseToken: claimedA!.lease!.token },
        { jobId: b.id, leaseToken: 'not-the-token' },
        { jobId: unknownId, leaseToken: claimedA!.lease!.token },
      ]);

      expect(outcomes.map(summary)).toEqual([{ ok: true }, { ok: false, code: 'invalid_state' }, { ok: false, code: 'not_found' }]);
      expect((await h.job(a.id)).state).toBe('completed');
      expect((await h.job(b.id)).state).toBe('active');
    });
  });

  describe('fail', () => {
    it('schedules a retry after the backoff when attempts remain', async () => {
      const job = await h.enqueue();
      const claimed = await h.claimOne('w1');

      const [outcome] = await h.app.settlement.fail(ANONYMOUS, 'w1', [{ jobId: job.id, leaseToken: claimed.lease!.token, report: BOOM }]);

      // Default policy: 1 s initial interval; the fixed entropy makes the jitter factor exactly 1.
      expect(outcome).toMatchObject({ ok: true, nextRetryAt: h.clock.now() + 1_000, transition: { from: 'active', to: 'retryable' } });
      expect(await h.job(job.id)).toMatchObject({
        state: 'retryable',
        attempt: 1,
        nextRetryAt: h.clock.now() + 1_000,
        error: { type: 'boom', message: 'it broke', attempt: 1, occurredAt: h.clock.now() },
      });
    });

    it('discards a job whose last attempt failed', async () => {
      const job = await h.enqueue({ retry: { maxAttempts: 1 } });
      const claimed = await h.claimOne('w1');

      await h.app.settlement.fail(ANONYMOUS, 'w1', [{ jobId: job.id, leaseToken: claimed.lease!.token, report: BOOM }]);

      expect(await h.job(job.id)).toMatchObject({ state: 'discarded', deadLetter: false, errors: [{ type: 'boom', attempt: 1 }] });
    });

    it('dead-letters an exhausted job whose policy says so', async () => {
      const job = await h.enqueue({ retry: { maxAttempts: 1, onExhaustion: 'dead_letter' } });
      const claimed = await h.claimOne('w1');

      await h.app.settlement.fail(ANONYMOUS, 'w1', [{ jobId: job.id, leaseToken: claimed.lease!.token, report: BOOM }]);

      expect(await h.job(job.id)).toMatchObject({ state: 'discarded', deadLetter: true });
    });

    it('discards at once on an error type the policy lists as non-retryable', async () => {
      const job = await h.enqueue({ retry: { maxAttempts: 5, nonRetryableErrors: ['validation.*'] } });
      const claimed = await h.claimOne('w1');

      const report = { type: 'validation.bad_input', message: 'no', backtrace: [] };
      await h.app.settlement.fail(ANONYMOUS, 'w1', [{ jobId: job.id, leaseToken: claimed.lease!.token, report }]);

      expect(await h.job(job.id)).toMatchObject({ state: 'discarded', attempt: 1 });
    });

    it("follows the handler's discard code over the attempts left", async () => {
      const job = await h.enqueue({ retry: { maxAttempts: 5 } });
      const claimed = await h.claimOne('w1');

      const report = { ...BOOM, code: 'discard' as const };
      await h.app.settlement.fail(ANONYMOUS, 'w1', [{ jobId: job.id, leaseToken: claimed.lease!.token, report }]);

      expect(await h.job(job.id)).toMatchObject({ state: 'discarded', deadLetter: false, attempt: 1 });
    });

    it('gives each item of a batch its own outcome, in request order', async () => {
      const mine = await h.enqueue();
      const [held] = await h.claim('w1');
      const theirs = await h.enqueue();
      const [heldByW2] = await h.claim('w2');

      const outcomes = await h.app.settlement.fail(ANONYMOUS, 'w1', [
        { jobId: uuidv7(), leaseToken: held!.lease!.token, report: BOOM },
        { jobId: theirs.id, leaseToken: heldByW2!.lease!.token, report: BOOM },
        { jobId: mine.id, leaseToken: held!.lease!.token, report: BOOM },
      ]);

      expect(outcomes.map(summary)).toEqual([{ ok: false, code: 'not_found' }, { ok: false, code: 'invalid_state' }, { ok: true }]);
      expect((await h.job(mine.id)).state).toBe('retryable');
      expect((await h.job(theirs.id)).state).toBe('active');
    });

    it('records a job.timeout event when the worker reports that its attempt timed out', async () => {
      const job = await h.enqueue({ timeoutSeconds: 10 });
      const claimed = await h.claimOne('w1');
      h.clock.advance(10_000);

      const report = { type: 'timeout', message: 'handler ran out of time', backtrace: [] };
      await h.app.settlement.fail(ANONYMOUS, 'w1', [{ jobId: job.id, leaseToken: claimed.lease!.token, report }]);

      expect(await h.timeoutEvents()).toEqual([
        {
          type: 'job.timeout',
          jobId: job.id,
          data: objectContaining({ worker_id: 'w1', attempt: 1, timeout_kind: 'execution', limit_seconds: 10 }),
        },
      ]);
    });

    it('records no event for a failure it refused', async () => {
      const job = await h.enqueue();
      await h.claimOne('w1');

      const report = { type: 'timeout', message: 'late', backtrace: [] };
      await h.app.settlement.fail(ANONYMOUS, 'w2', [{ jobId: job.id, leaseToken: 'someone-elses', report }]);

      expect(await h.timeoutEvents()).toEqual([]);
    });
  });

  describe('reportProgress', () => {
    it('records the progress of a held job and renews its lease', async () => {
      const job = await h.enqueue();
      const claimed = await h.claimOne('w1');
      h.clock.advance(10_000);

      const answer = await h.app.settlement.reportProgress(ANONYMOUS, 'w1', job.id, claimed.lease!.token, { progress: 0.5 });

      // Renewed from now by the 60 s visibility timeout, which ends before the execution deadline.
      expect(answer).toEqual({ applied: true, leaseExpiresAt: h.clock.now() + 60_000 });
      expect(await h.job(job.id)).toMatchObject({ progress: 0.5, lease: { isConfirmed: true, renewedAt: h.clock.now() } });
    });

    it('ignores progress for a job the worker does not hold', async () => {
      const job = await h.enqueue();
      const claimed = await h.claimOne('w1');

      const answer = await h.app.settlement.reportProgress(ANONYMOUS, 'w2', job.id, claimed.lease!.token, { progress: 0.5 });

      expect(answer.applied).toBe(false);
      expect((await h.job(job.id)).progress).toBeUndefined();
    });

    it('ignores progress for a job that is no longer active', async () => {
      const job = await h.enqueue();
      const claimed = await h.claimOne('w1');
      await h.app.settlement.ack(ANONYMOUS, 'w1', [{ jobId: job.id, leaseToken: claimed.lease!.token }]);

      const answer = await h.app.settlement.reportProgress(ANONYMOUS, 'w1', job.id, claimed.lease!.token, { progress: 0.9 });

      expect(answer.applied).toBe(false);
      expect((await h.job(job.id)).state).toBe('completed');
    });
  });

  describe('extendLease', () => {
    it('renews the lease of a held job from now', async () => {
      const job = await h.enqueue();
      const claimed = await h.claimOne('w1');
      h.clock.advance(20_000);

      expect(await h.app.settlement.extendLease(ANONYMOUS, 'w1', job.id, claimed.lease!.token)).toBe(h.clock.now() + 60_000);
    });

    it('refuses to extend a lease the worker does not hold', async () => {
      const job = await h.enqueue();
      const claimed = await h.claimOne('w1');

      await expect(h.app.settlement.extendLease(ANONYMOUS, 'w2', job.id, claimed.lease!.token)).rejects.toMatchObject({
        code: 'invalid_state',
      });
    });
  });
});
