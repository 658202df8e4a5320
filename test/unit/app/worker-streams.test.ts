import { ANONYMOUS } from '../../../src/domain/principal';
import { objectContaining } from '../../support/matchers';
import { AppHarness } from './app-harness';

describe('WorkerStreams', () => {
  let h: AppHarness;

  beforeEach(() => {
    h = new AppHarness();
  });

  afterEach(async () => {
    await h.stop();
  });

  describe('openFetch', () => {
    it('refuses a worker that is not registered', async () => {
      await expect(h.openFetch('nobody')).rejects.toMatchObject({ code: 'not_found' });
    });

    it('refuses a worker that is directed away from running', async () => {
      await h.register('w1');
      await h.app.workers.direct(ANONYMOUS, { workerId: 'w1' }, 'quiet');

      await expect(h.openFetch('w1')).rejects.toMatchObject({ code: 'invalid_state' });
    });

    it('refuses a queue the worker did not register for', async () => {
      await h.register('w1', { queues: ['mail'] });

      await expect(h.app.streams.openFetch(ANONYMOUS, 'w1', ['billing'], 0)).rejects.toMatchObject({ code: 'invalid_request' });
    });

    it('ends the stream it replaces when the same worker opens another', async () => {
      await h.register('w1');
      const first = await h.openFetch('w1');

      const second = await h.openFetch('w1');

      expect(first.endReason).toBe('replaced');
      expect(second.endReason).toBeUndefined();
    });
  });

  describe('deliveries', () => {
    it('claims available jobs for a running worker, never beyond its concurrency', async () => {
      await h.register('w1', { concurrency: 2 });
      const jobs = [await h.enqueue(), await h.enqueue(), await h.enqueue()];

      const delivered = await h.claim('w1');

      expect(delivered.map((job) => job.id)).toEqual([jobs[0]!.id, jobs[1]!.id]);
      for (const job of delivered)
        expect(job).toMatchObject({ state: 'active', attempt: 1, lease: { workerId: 'w1', isConfirmed: false } });
      expect((await h.app.workers.get('w1')).heldJobIds.toSorted()).toEqual([jobs[0]!.id, jobs[1]!.id].toSorted());
      expect((await h.job(jobs[2]!.id)).state).toBe('available');
      expect(h.telemetry.pathOf(jobs[0]!.id)).toEqual(['none>available', 'available>active']);
    });

    it("takes jobs from the worker's queues in the order it registered them", async () => {
      await h.register('w1', { queues: ['high', 'low'], concurrency: 1 });
      await h.enqueue({ queue: 'low' });
      const urgent = await h.enqueue({ queue: 'high' });

      expect((await h.claimOne('w1')).id).toBe(urgent.id);
    });

    it('wakes a waiting stream when a job for it is enqueued', async () => {
      await h.register('w1');
      const session = await h.openFetch('w1');
      const deliveries = h.app.streams.deliveries(session);
      const next = deliveries.next();

      const job = await h.enqueue();

      expect(await next).toEqual({ done: false, value: [objectContaining({ id: job.id, state: 'active' })] });
      await deliveries.return(undefined);
    });

    it('claims again for a full worker once it settles a job', async () => {
      await h.register('w1', { concurrency: 1 });
      const first = await h.enqueue();
      const second = await h.enqueue();
      const session = await h.openFetch('w1');
      const deliveries = h.app.streams.deliveries(session);
      const firstBatch = await deliveries.next();
      expect(firstBatch.done === true ? [] : firstBatch.value.map((job) => job.id)).toEqual([first.id]);
      const next = deliveries.next();

      const leaseToken = firstBatch.done === true ? '' : firstBatch.value[0]!.lease!.token;
      await h.app.settlement.ack(ANONYMOUS, 'w1', [{ jobId: first.id, leaseToken }]);

      const secondBatch = await next;
      expect(secondBatch.done === true ? [] : secondBatch.value.map((job) => job.id)).toEqual([second.id]);
      await deliveries.return(undefined);
    });

    it('ends the stream when the worker is directed away from running', async () => {
      await h.register('w1');
      const session = await h.openFetch('w1');
      const next = h.app.streams.deliveries(session).next();

      await h.app.workers.direct(ANONYMOUS, { workerId: 'w1' }, 'quiet');

      expect((await next).done).toBe(true);
      expect(session.endReason).toBe('not_running');
    });

    it('ends the stream when the worker deregisters', async () => {
      await h.register('w1');
      const session = await h.openFetch('w1');
      const next = h.app.streams.deliveries(session).next();

      await h.app.workers.deregister(ANONYMOUS, 'w1');

      expect((await next).done).toBe(true);
      expect(session.endReason).toBe('worker_removed');
    });

    it('releases the jobs it claimed for a stream that closed meanwhile, without spending an attempt', async () => {
      await h.register('w1');
      const job = await h.enqueue();
      const session = await h.openFetch('w1');
      const deliveries = h.app.streams.deliveries(session);

      // The delivery loop has decided to claim; the stream closes before the claim's jobs can be written.
      const next = deliveries.next();
      session.end('client_cancelled');

      expect((await next).done).toBe(true);
      expect(await h.job(job.id)).toMatchObject({ state: 'available', attempt: 0 });
      expect((await h.app.workers.get('w1')).heldJobIds).toEqual([]);
      expect(h.telemetry.pathOf(job.id)).toEqual(['none>available', 'available>active', 'active>available']);
    });
  });

  describe('endAll', () => {
    it('ends every open Fetch stream with the given reason', async () => {
      await h.register('w1');
      await h.register('w2');
      const sessions = [await h.openFetch('w1'), await h.openFetch('w2')];

      h.app.streams.endAll('server_shutdown');

      expect(sessions.map((s) => s.endReason)).toEqual(['server_shutdown', 'server_shutdown']);
    });
  });
});
