import { backendUnavailable } from '../../../src/domain/errors';
import { ANONYMOUS } from '../../../src/domain/principal';
import { AppHarness, SETTINGS } from './app-harness';

describe('WorkerRegistry', () => {
  let h: AppHarness;

  beforeEach(() => {
    h = new AppHarness();
  });

  afterEach(async () => {
    await h.stop();
  });

  describe('register', () => {
    it('registers a worker as running and answers the protocol settings', async () => {
      const answer = await h.app.workers.register(ANONYMOUS, {
        workerId: 'w1',
        hostname: 'host',
        pid: 7,
        queues: ['mail'],
        concurrency: 4,
        labels: [],
      });

      expect(answer).toEqual(SETTINGS);
      const { worker, heldJobIds } = await h.app.workers.get('w1');
      expect(worker).toMatchObject({
        state: 'running',
        queues: ['mail'],
        concurrency: 4,
        registeredAt: h.clock.now(),
        lastBeatAt: h.clock.now(),
      });
      expect(heldJobIds).toEqual([]);
      expect(h.telemetry.workerTransitions).toEqual([{ workerId: 'w1', from: 'none', to: 'running' }]);
    });

    it('refuses a second registration of a worker id that is still alive', async () => {
      await h.register('w1');
      h.clock.advance(SETTINGS.heartbeatTimeoutMs);

      await expect(h.register('w1')).rejects.toMatchObject({ code: 'duplicate' });
      expect(h.telemetry.workerTransitions).toHaveLength(1);
    });

    it('recovers a registration silent past the heartbeat timeout, failing its jobs as worker_death, and registers anew', async () => {
      await h.register('w1');
      const job = await h.enqueue();
      await h.claimOne('w1');
      h.clock.advance(SETTINGS.heartbeatTimeoutMs + 1);

      await h.register('w1');

      expect(await h.job(job.id)).toMatchObject({ state: 'available', attempt: 1, error: { type: 'worker_death' } });
      expect((await h.app.workers.get('w1')).heldJobIds).toEqual([]);
      expect(h.telemetry.workerTransitions).toEqual([
        { workerId: 'w1', from: 'none', to: 'running' },
        { workerId: 'w1', from: 'running', to: 'terminated', reason: 'dead' },
        { workerId: 'w1', from: 'none', to: 'running' },
      ]);
    });
  });

  describe('beat', () => {
    beforeEach(async () => {
      await h.register('w1');
    });

    it('applies the state the worker reports and records the transition', async () => {
      const outcome = await h.beat('w1', [], 'quiet');

      expect(outcome).toMatchObject({ result: 'applied', desiredState: 'quiet' });
      expect((await h.app.workers.get('w1')).worker.state).toBe('quiet');
      expect(h.telemetry.workerTransitions.at(-1)).toEqual({ workerId: 'w1', from: 'running', to: 'quiet' });
    });

    it('records when the worker was last heard from', async () => {
      h.clock.advance(2_000);

      await h.beat('w1');

      expect((await h.app.workers.get('w1')).worker.lastBeatAt).toBe(h.clock.now());
    });

    it('keeps answering an operator directive until the worker reports reaching it', async () => {
      await h.app.workers.direct(ANONYMOUS, { workerId: 'w1' }, 'quiet');

      expect((await h.beat('w1', [], 'running')).desiredState).toBe('quiet');
      expect((await h.app.workers.get('w1')).worker).toMatchObject({ state: 'running', directive: 'quiet' });

      expect((await h.beat('w1', [], 'quiet')).desiredState).toBe('quiet');
      const { worker } = await h.app.workers.get('w1');
      expect(worker.state).toBe('quiet');
      expect(worker.directive).toBeUndefined();
    });

    it('never takes a worker back from terminate', async () => {
      await h.beat('w1', [], 'terminate');

      expect((await h.beat('w1', [], 'running')).desiredState).toBe('terminate');
    });

    it('answers a beat older than the last one as stale and applies nothing', async () => {
      await h.app.workers.beat(ANONYMOUS, { workerId: 'w1', state: 'quiet', sequence: 5, activeJobIds: [] });
      h.clock.advance(1_000);

      const outcome = await h.app.workers.beat(ANONYMOUS, { workerId: 'w1', state: 'running', sequence: 4, activeJobIds: [] });

      expect(outcome.result).toBe('stale');
      expect((await h.app.workers.get('w1')).worker).toMatchObject({ state: 'quiet', lastBeatAt: h.clock.now() - 1_000 });
    });

    it('confirms the listed jobs it holds and names those cancelled meanwhile', async () => {
      const kept = await h.enqueue();
      const dropped = await h.enqueue();
      await h.claim('w1');
      await h.app.jobs.cancel(ANONYMOUS, dropped.id);
      h.clock.advance(1_000);

      const outcome = await h.beat('w1', [kept.id, dropped.id]);

      expect(outcome.cancelledJobIds).toEqual([dropped.id]);
      expect((await h.job(kept.id)).lease).toMatchObject({ isConfirmed: true, renewedAt: h.clock.now() });
    });

    it('names the listed jobs that were taken back from the worker', async () => {
      const job = await h.enqueue({ timeoutSeconds: 10, gracePeriodSeconds: 0 });
      await h.claimOne('w1');
      await h.beat('w1', [job.id]);
      h.clock.advance(10_000);
      await h.app.recovery.reclaimExpiredLeases();

      expect((await h.beat('w1', [job.id])).reclaimedJobIds).toEqual([job.id]);
    });

    it('answers not_found for a worker that is not registered', async () => {
      await expect(h.beat('nobody')).rejects.toMatchObject({ code: 'not_found' });
    });

    describe('of many workers at once', () => {
      const ids = Array.from({ length: 50 }, (_, i) => `many-${i}`);

      beforeEach(async () => {
        for (const id of ids) await h.register(id);
      });

      it('records the beats that arrive together in fewer store calls than beats, each answered with its own outcome', async () => {
        const calls = jest.spyOn(h.store, 'recordBeats');

        const outcomes = await Promise.all(ids.map((id, i) => h.beat(id, [], i % 2 === 0 ? 'running' : 'quiet')));

        expect(calls.mock.calls.length).toBeLessThan(ids.length);
        expect(calls.mock.calls.flatMap(([beats]) => beats.map((beat) => beat.workerId)).toSorted()).toEqual(ids.toSorted());
        expect(outcomes.map((outcome) => outcome.desiredState)).toEqual(ids.map((_, i) => (i % 2 === 0 ? 'running' : 'quiet')));
        expect((await h.app.workers.get('many-1')).worker).toMatchObject({ state: 'quiet', lastSequence: 1 });
      });

      it('answers not_found to the beat of a worker gone from the store only, the others of its batch applied', async () => {
        const memories = await Promise.all(ids.map((id) => h.app.workers.startBeats(ANONYMOUS, id)));
        // Removed by another replica: this one still remembers its owner, so only the store can tell.
        await h.store.removeWorker({ workerId: 'many-7', reason: 'dead', now: h.clock.now(), recoveries: [] });
        const calls = jest.spyOn(h.store, 'recordBeats');

        const beats = ids.map((id, i) =>
          h.app.workers.beat(ANONYMOUS, { workerId: id, state: 'running', sequence: 1, activeJobIds: [] }, memories[i]),
        );

        const results = await Promise.allSettled(beats);
        expect(calls.mock.calls.length).toBeLessThan(ids.length);
        expect(results[7]).toMatchObject({ status: 'rejected', reason: { code: 'not_found' } });
        expect(results.filter((result, i) => i !== 7 && result.status === 'fulfilled' && result.value.result === 'applied')).toHaveLength(
          49,
        );
      });

      it('fails every beat of a batch whose store call failed, as each call alone would have', async () => {
        const memories = await Promise.all(ids.map((id) => h.app.workers.startBeats(ANONYMOUS, id)));
        // The store answering as an unreachable Redis does: the whole call fails.
        jest.spyOn(h.store, 'recordBeats').mockRejectedValueOnce(backendUnavailable('Redis'));

        const beats = ids.map((id, i) =>
          h.app.workers.beat(ANONYMOUS, { workerId: id, state: 'running', sequence: 1, activeJobIds: [] }, memories[i]),
        );

        for (const result of await Promise.allSettled(beats))
          expect(result).toMatchObject({ status: 'rejected', reason: { code: 'unavailable' } });
        expect((await h.app.workers.get('many-0')).worker.lastSequence).toBe(0);
      });
    });

    describe('from what its Beat stream remembers', () => {
      const report = (sequence: number, state: 'running' | 'quiet' = 'running') => ({
        workerId: 'w1',
        state,
        sequence,
        activeJobIds: [],
      });

      it('decides each beat without reading the worker again', async () => {
        const memory = await h.app.workers.startBeats(ANONYMOUS, 'w1');
        const reads = jest.spyOn(h.store, 'getWorker');

        for (let sequence = 1; sequence <= 3; sequence++) {
          h.clock.advance(1_000);
          expect(await h.app.workers.beat(ANONYMOUS, report(sequence), memory)).toMatchObject({ result: 'applied' });
        }
        expect(await h.app.workers.beat(ANONYMOUS, report(4, 'quiet'), memory)).toMatchObject({ result: 'applied', desiredState: 'quiet' });

        expect(reads).not.toHaveBeenCalled();
        expect((await h.app.workers.get('w1')).worker).toMatchObject({ state: 'quiet', lastBeatAt: h.clock.now(), lastSequence: 4 });
        expect(memory.fields).toEqual({ state: 'quiet' });
        expect(h.telemetry.workerTransitions.at(-1)).toEqual({ workerId: 'w1', from: 'running', to: 'quiet' });
      });

      it('reads the worker again when a directive changed it meanwhile, and answers the directive', async () => {
        const memory = await h.app.workers.startBeats(ANONYMOUS, 'w1');
        await h.app.workers.direct(ANONYMOUS, { workerId: 'w1' }, 'quiet');

        expect(await h.app.workers.beat(ANONYMOUS, report(1), memory)).toMatchObject({ result: 'applied', desiredState: 'quiet' });
        expect(memory.fields).toEqual({ state: 'running', directive: 'quiet' });
        expect(await h.app.workers.beat(ANONYMOUS, report(2, 'quiet'), memory)).toMatchObject({ result: 'applied', desiredState: 'quiet' });

        expect((await h.app.workers.get('w1')).worker).toMatchObject({ state: 'quiet', directive: undefined });
      });

      it("answers not_found once the worker is gone, and a stranger's stream never starts", async () => {
        const memory = await h.app.workers.startBeats(ANONYMOUS, 'w1');
        await h.app.workers.deregister(ANONYMOUS, 'w1');

        await expect(h.app.workers.beat(ANONYMOUS, report(1), memory)).rejects.toMatchObject({ code: 'not_found' });
        await expect(h.app.workers.startBeats(ANONYMOUS, 'nobody')).rejects.toMatchObject({ code: 'not_found' });
      });
    });
  });

  describe('direct', () => {
    it('directs the workers carrying a label, skipping those that cannot take the directive', async () => {
      await h.register('w1', { labels: ['blue'] });
      await h.register('w2', { labels: ['blue'] });
      await h.register('w3', { labels: ['red'] });
      await h.beat('w2', [], 'terminate');
      const beats = h.listen('w1');

      const directed = await h.app.workers.direct(ANONYMOUS, { label: 'blue' }, 'quiet');

      expect(directed).toEqual(['w1']);
      expect(beats.directives).toEqual(['quiet']);
      expect((await h.app.workers.get('w2')).worker).toMatchObject({ state: 'terminate' });
      expect((await h.app.workers.get('w3')).worker.directive).toBeUndefined();
    });

    it('directs the workers of a queue', async () => {
      await h.register('w1', { queues: ['mail'] });
      await h.register('w2', { queues: ['billing', 'mail'] });
      await h.register('w3', { queues: ['billing'] });

      expect(await h.app.workers.direct(ANONYMOUS, { queue: 'mail' }, 'quiet')).toEqual(['w1', 'w2']);
    });

    it('refuses to direct a worker named by id that cannot take the directive', async () => {
      await h.register('w1');
      await h.beat('w1', [], 'terminate');

      await expect(h.app.workers.direct(ANONYMOUS, { workerId: 'w1' }, 'running')).rejects.toMatchObject({ code: 'invalid_state' });
    });

    it('answers not_found for a worker named by id that is not registered', async () => {
      await expect(h.app.workers.direct(ANONYMOUS, { workerId: 'nobody' }, 'quiet')).rejects.toMatchObject({ code: 'not_found' });
    });
  });

  describe('deregister', () => {
    it('removes the worker and fails the jobs it held as shutdown, back in the queue at once', async () => {
      await h.register('w1');
      const job = await h.enqueue();
      await h.claimOne('w1');
      const beats = h.listen('w1');

      expect(await h.app.workers.deregister(ANONYMOUS, 'w1')).toEqual([job.id]);

      expect(await h.job(job.id)).toMatchObject({ state: 'available', attempt: 1, error: { type: 'shutdown', attempt: 1 } });
      await expect(h.app.workers.get('w1')).rejects.toMatchObject({ code: 'not_found' });
      expect(beats.isRemoved).toBe(true);
      expect(h.telemetry.workerTransitions.at(-1)).toEqual({ workerId: 'w1', from: 'running', to: 'terminated', reason: 'deregistered' });
      expect(h.telemetry.pathOf(job.id).at(-1)).toBe('active>available');
    });

    it('discards a held job whose last attempt it was', async () => {
      await h.register('w1');
      const job = await h.enqueue({ retry: { maxAttempts: 1 } });
      await h.claimOne('w1');

      await h.app.workers.deregister(ANONYMOUS, 'w1');

      expect(await h.job(job.id)).toMatchObject({ state: 'discarded', error: { type: 'shutdown' } });
    });

    it('answers not_found for a worker that is not registered', async () => {
      await expect(h.app.workers.deregister(ANONYMOUS, 'nobody')).rejects.toMatchObject({ code: 'not_found' });
    });
  });
});
