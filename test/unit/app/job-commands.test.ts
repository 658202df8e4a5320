import { ANONYMOUS } from '../../../src/domain/principal';
import { uuidv7 } from 'uuidv7';
import { objectContaining } from '../../support/matchers';
import { AppHarness } from './app-harness';

const TRACEPARENT = '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01';

describe('JobCommands', () => {
  let h: AppHarness;

  beforeEach(() => {
    h = new AppHarness();
  });

  afterEach(async () => {
    await h.stop();
  });

  describe('enqueue', () => {
    it('stores a job as available, stamped with the clock, and records its transition from none', async () => {
      const job = await h.enqueue();

      expect(await h.job(job.id)).toMatchObject({ state: 'available', attempt: 0, createdAt: h.clock.now(), enqueuedAt: h.clock.now() });
      expect(h.telemetry.transitions).toEqual([objectContaining({ jobId: job.id, from: 'none', to: 'available' })]);
    });

    it('stores a job whose scheduled_at is in the future as scheduled', async () => {
      const job = await h.enqueue({ scheduledAt: h.clock.now() + 60_000 });

      expect((await h.job(job.id)).state).toBe('scheduled');
      expect(h.telemetry.pathOf(job.id)).toEqual(['none>scheduled']);
    });

    it('stages a job as pending when asked', async () => {
      const job = await h.enqueue({}, { pending: true });

      expect((await h.job(job.id)).state).toBe('pending');
    });

    it('resolves the server defaults into the stored job', async () => {
      const job = await h.enqueue();

      expect(job).toMatchObject({ timeoutMs: 60_000, visibilityTimeoutMs: 60_000, gracePeriodMs: 30_000, heartbeatTimeoutMs: 60_000 });
    });

    it("copies the caller's trace context into meta", async () => {
      const [outcome] = await h.app.jobs.enqueue(ANONYMOUS, [{ type: 'test.job', args: [], meta: { tenant: 'a' } }], {
        pending: false,
        trace: { traceparent: TRACEPARENT, tracestate: 'vendor=1' },
      });

      expect(outcome!.job.meta).toEqual({ tenant: 'a', traceparent: TRACEPARENT, tracestate: 'vendor=1' });
    });

    it("keeps a traceparent the producer put in meta over the caller's", async () => {
      const own = '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01';
      const [outcome] = await h.app.jobs.enqueue(ANONYMOUS, [{ type: 'test.job', args: [], meta: { traceparent: own } }], {
        pending: false,
        trace: { traceparent: TRACEPARENT },
      });

      expect(outcome!.job.meta).toEqual({ traceparent: own });
    });

    it('leaves meta as submitted when the call carries no trace context', async () => {
      const [outcome] = await h.app.jobs.enqueue(ANONYMOUS, [{ type: 'test.job', args: [], meta: { tenant: 'a' } }], {
        pending: false,
        trace: {},
      });

      expect(outcome!.job.meta).toEqual({ tenant: 'a' });
    });

    it('stores nothing when one job of a batch is invalid', async () => {
      const validId = uuidv7();
      const enqueue = h.app.jobs.enqueue(
        ANONYMOUS,
        [
          { id: validId, type: 'test.job', args: [] },
          { type: 'Not A Type', args: [] },
        ],
        { pending: false },
      );

      await expect(enqueue).rejects.toMatchObject({ code: 'invalid_payload' });
      await expect(h.app.jobs.get(ANONYMOUS, validId)).rejects.toMatchObject({ code: 'not_found' });
      expect(h.telemetry.transitions).toEqual([]);
    });
  });

  describe('get', () => {
    it('answers not_found for a job id that was never stored', async () => {
      await expect(h.app.jobs.get(ANONYMOUS, uuidv7())).rejects.toMatchObject({ code: 'not_found' });
    });
  });

  describe('cancel', () => {
    it('cancels a waiting job and records the transition', async () => {
      const job = await h.enqueue();

      const cancelled = await h.app.jobs.cancel(ANONYMOUS, job.id);

      expect(cancelled).toMatchObject({ state: 'cancelled', completedAt: h.clock.now() });
      expect(h.telemetry.pathOf(job.id)).toEqual(['none>available', 'available>cancelled']);
    });

    it('records no second transition when the job is already cancelled', async () => {
      const job = await h.enqueue();
      await h.app.jobs.cancel(ANONYMOUS, job.id);

      expect((await h.app.jobs.cancel(ANONYMOUS, job.id)).state).toBe('cancelled');
      expect(h.telemetry.pathOf(job.id)).toEqual(['none>available', 'available>cancelled']);
    });

    it('cancels an active job, records the worker that held it and tells that worker', async () => {
      await h.register('w1');
      const job = await h.enqueue();
      await h.claimOne('w1');
      const beats = h.listen('w1');

      await h.app.jobs.cancel(ANONYMOUS, job.id);

      expect(h.telemetry.transitions.at(-1)).toMatchObject({ jobId: job.id, from: 'active', to: 'cancelled', workerId: 'w1' });
      expect(beats.cancelledJobIds).toEqual([job.id]);
      expect((await h.app.workers.get('w1')).heldJobIds).toEqual([]);
    });

    it('refuses to cancel a finished job', async () => {
      await h.register('w1');
      const job = await h.enqueue();
      const claimed = await h.claimOne('w1');
      await h.app.settlement.ack(ANONYMOUS, 'w1', [{ jobId: job.id, leaseToken: claimed.lease!.token }]);

      await expect(h.app.jobs.cancel(ANONYMOUS, job.id)).rejects.toMatchObject({ code: 'invalid_state' });
    });

    it('answers not_found for a job id that was never stored', async () => {
      await expect(h.app.jobs.cancel(ANONYMOUS, uuidv7())).rejects.toMatchObject({ code: 'not_found' });
    });
  });

  describe('activate', () => {
    it('makes a pending job available and records the transition', async () => {
      const job = await h.enqueue({}, { pending: true });
      h.clock.advance(5_000);

      const activated = await h.app.jobs.activate(ANONYMOUS, job.id);

      expect(activated).toMatchObject({ state: 'available', enqueuedAt: h.clock.now() });
      expect(h.telemetry.pathOf(job.id)).toEqual(['none>pending', 'pending>available']);
    });

    it('refuses to activate a job that is not pending', async () => {
      const job = await h.enqueue();

      await expect(h.app.jobs.activate(ANONYMOUS, job.id)).rejects.toMatchObject({ code: 'invalid_state' });
      expect(h.telemetry.pathOf(job.id)).toEqual(['none>available']);
    });
  });

  describe('retry', () => {
    it('revives a discarded job with its attempts and errors reset, and records the transition', async () => {
      await h.register('w1');
      const job = await h.enqueue({ retry: { maxAttempts: 1 } });
      const claimed = await h.claimOne('w1');
      await h.app.settlement.fail(ANONYMOUS, 'w1', [
        { jobId: job.id, leaseToken: claimed.lease!.token, report: { type: 'boom', message: 'no', backtrace: [] } },
      ]);
      expect((await h.job(job.id)).state).toBe('discarded');

      const revived = await h.app.jobs.retry(ANONYMOUS, job.id);

      expect(revived).toMatchObject({ state: 'available', attempt: 0, errors: [] });
      expect(revived.error).toBeUndefined();
      expect(h.telemetry.pathOf(job.id).at(-1)).toBe('discarded>available');
    });

    it('refuses to retry a job that is not discarded', async () => {
      const job = await h.enqueue();

      await expect(h.app.jobs.retry(ANONYMOUS, job.id)).rejects.toMatchObject({ code: 'invalid_state' });
    });
  });

  describe('listing queues', () => {
    it('counts the jobs of each queue by state, in name order', async () => {
      await h.enqueue({ queue: 'mail' });
      await h.enqueue({ queue: 'mail' }, { pending: true });
      await h.enqueue({ queue: 'billing' });

      const page = await h.app.queues.list(ANONYMOUS, { limit: 10 });

      expect(page.items.map((q) => [q.queue, q.available, q.pending])).toEqual([
        ['billing', 1, 0],
        ['mail', 1, 1],
      ]);
    });
  });
});
