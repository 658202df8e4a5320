import { createApplication } from '../../../src/app/application';
import type { Job } from '../../../src/domain/job';
import { ANONYMOUS } from '../../../src/domain/principal';
import type { ClaimParams, ClaimResult } from '../../../src/store/job-store';
import { MemoryJobStore } from '../../../src/store/memory/memory-job-store';
import type { StoreSignal } from '../../../src/store/store-signal';
import { objectContaining } from '../../support/matchers';
import { collectGarbage } from '../../support/collect-garbage';
import { Progress } from '../../support/waiting';
import { AppHarness } from './app-harness';
import { pulledDeliveries } from './pulled-deliveries';

/**
 * A memory store whose signals can be lost, as Redis pub/sub messages are
 * while the subscriber is away: it says it went away, drops what happens
 * meanwhile, and says it is back. It counts claims.
 */
class StoreThatGoesAway extends MemoryJobStore {
  claims = 0;
  readonly progress = new Progress();
  private isAway = false;
  /** Signals are dropped without a word, as a notification lost in transit would be. */
  isLosingSignals = false;
  private readonly subscribers = new Set<(signal: StoreSignal) => void>();

  override subscribe(listener: (signal: StoreSignal) => void): () => void {
    this.subscribers.add(listener);
    const unsubscribe = super.subscribe((signal) => {
      if (!this.isAway && !this.isLosingSignals) listener(signal);
    });
    return () => {
      this.subscribers.delete(listener);
      unsubscribe();
    };
  }

  override async claim(params: ClaimParams): Promise<ClaimResult> {
    const result = await super.claim(params);
    this.claims += 1;
    this.progress.changed();
    return result;
  }

  goAway(): void {
    this.isAway = true;
    for (const listener of this.subscribers) listener({ kind: 'availability', isAvailable: false });
  }

  comeBack(): void {
    this.isAway = false;
    for (const listener of this.subscribers) listener({ kind: 'availability', isAvailable: true });
  }
}

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

  describe('deliver', () => {
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
      const deliveries = pulledDeliveries(h.app.streams, session);
      const next = deliveries.next();

      const job = await h.enqueue();

      expect(await next).toEqual({ done: false, value: [objectContaining({ id: job.id, state: 'active' })] });
      await deliveries.return(undefined);
    });

    it('wakes the streams still open on a queue once others on it have closed', async () => {
      const ids = ['w1', 'w2', 'w3'];
      for (const id of ids) await h.register(id);
      const sessions = await Promise.all(ids.map((id) => h.openFetch(id)));
      const streams = sessions.map((session) => pulledDeliveries(h.app.streams, session));
      const pending = streams.map((stream) => stream.next());
      sessions[0]!.end('client_cancelled');
      sessions[1]!.end('client_cancelled');
      expect(await pending[0]).toEqual({ done: true, value: undefined });
      expect(await pending[1]).toEqual({ done: true, value: undefined });

      const job = await h.enqueue();

      expect(await pending[2]).toEqual({ done: false, value: [objectContaining({ id: job.id, state: 'active' })] });
      await streams[2]!.return(undefined);
    });

    it('finds the jobs whose signals were lost while the store was away with one stream per queue, not every stream', async () => {
      const store = new StoreThatGoesAway();
      const app = createApplication({ ...h.app.context, store });
      const ids = ['w1', 'w2', 'w3', 'w4', 'w5', 'w6'];
      for (const workerId of ids)
        await app.workers.register(ANONYMOUS, { workerId, hostname: 'h', pid: 1, queues: ['default'], concurrency: 1, labels: [] });
      const sessions = await Promise.all(ids.map((workerId) => app.streams.openFetch(ANONYMOUS, workerId, [], 0)));
      const streams = sessions.map((session) => pulledDeliveries(app.streams, session));
      const delivered: string[][] = [];
      const record = async (stream: (typeof streams)[number]): Promise<void> => {
        const next = await stream.next();
        if (next.done !== true) delivered.push(next.value.map((job) => job.id));
        store.progress.changed();
      };
      const recording = streams.map(record);
      await store.progress.until(
        () => store.claims === ids.length,
        () => `the first claim of every stream (${store.claims})`,
      );
      store.goAway();
      const submission = { type: 'test.job', args: [] };
      const lost = await app.jobs.enqueue(ANONYMOUS, [submission, submission], { pending: false });

      store.comeBack();

      // The first stream woken takes one job and, full, wakes the next, which takes the other and wakes a third.
      await store.progress.until(
        () => delivered.length === 2 && store.claims === ids.length + 3,
        () => `both jobs delivered (${JSON.stringify(delivered)}) after three claims (${store.claims - ids.length})`,
      );
      expect(delivered.flat().toSorted()).toEqual(lost.map((outcome) => outcome.job.id).toSorted());
      expect(store.claims - ids.length).toBe(3);
      for (const session of sessions) session.end('client_cancelled');
      await Promise.all(recording);
      await Promise.all(streams.map((stream) => stream.return(undefined)));
      app.streams.stop();
    });

    it('claims once per queue and keepalive interval, by its first stream to keep alive, and so finds a job whose signal was lost', async () => {
      const store = new StoreThatGoesAway();
      // One interval lasts the whole test: only the first keepalive of the queue's streams claims.
      const app = createApplication({ ...h.app.context, store, settings: { ...h.app.context.settings, streamKeepaliveMs: 3_600_000 } });
      const ids = ['k1', 'k2', 'k3', 'k4', 'k5', 'k6'];
      for (const workerId of ids)
        await app.workers.register(ANONYMOUS, { workerId, hostname: 'h', pid: 1, queues: ['default'], concurrency: 10, labels: [] });
      const sessions = await Promise.all(ids.map((workerId) => app.streams.openFetch(ANONYMOUS, workerId, [], 0)));
      const batches: { workerId: string; jobIds: string[] }[] = [];
      const recording = sessions.map(async (session) => {
        for await (const jobs of pulledDeliveries(app.streams, session)) {
          batches.push({ workerId: session.workerId, jobIds: jobs.map((job) => job.id) });
          store.progress.changed();
        }
      });
      await store.progress.until(
        () => store.claims === ids.length,
        () => `the first claim of every stream (${store.claims})`,
      );
      store.isLosingSignals = true;
      const [lost] = await app.jobs.enqueue(ANONYMOUS, [{ type: 'test.job', args: [] }], { pending: false });
      store.isLosingSignals = false;

      for (const session of sessions) app.streams.keepalive(session);
      // Only the first stream to keep alive was woken for the queue; the others' keepalives left their loops asleep.
      expect(sessions.map((session) => [...session.wokenFor])).toEqual([['default'], [], [], [], [], []]);

      await store.progress.until(
        () => batches.length === 1,
        () => `the delivery of the lost job (${JSON.stringify(batches)})`,
      );
      expect(batches).toEqual([{ workerId: 'k1', jobIds: [lost!.job.id] }]);
      expect(store.claims - ids.length).toBe(1);
      for (const session of sessions) session.end('client_cancelled');
      await Promise.all(recording);
      app.streams.stop();
    });

    it('claims again for a full worker once it settles a job', async () => {
      await h.register('w1', { concurrency: 1 });
      const first = await h.enqueue();
      const second = await h.enqueue();
      const session = await h.openFetch('w1');
      const deliveries = pulledDeliveries(h.app.streams, session);
      const firstBatch = await deliveries.next();
      expect(firstBatch.done === true ? [] : firstBatch.value.map((job) => job.id)).toEqual([first.id]);
      const next = deliveries.next();

      const leaseToken = firstBatch.done === true ? '' : firstBatch.value[0]!.lease!.token;
      await h.app.settlement.ack(ANONYMOUS, 'w1', [{ jobId: first.id, leaseToken }]);

      const secondBatch = await next;
      expect(secondBatch.done === true ? [] : secondBatch.value.map((job) => job.id)).toEqual([second.id]);
      await deliveries.return(undefined);
    });

    it('does not claim when a worker settles a job if a claim found its queue empty and no job was announced since', async () => {
      const store = new StoreThatGoesAway();
      const app = createApplication({ ...h.app.context, store });
      await app.workers.register(ANONYMOUS, { workerId: 'w1', hostname: 'h', pid: 1, queues: ['default'], concurrency: 10, labels: [] });
      const session = await app.streams.openFetch(ANONYMOUS, 'w1', [], 0);
      const batches: Job[][] = [];
      const recording = (async () => {
        for await (const jobs of pulledDeliveries(app.streams, session)) {
          batches.push(jobs);
          store.progress.changed();
        }
      })();
      const delivery = async (n: number): Promise<Job> => {
        await store.progress.until(
          () => batches.length === n,
          () => `delivery ${n} (${batches.length} so far)`,
        );
        return batches[n - 1]![0]!;
      };
      await store.progress.until(
        () => store.claims === 1,
        () => 'the first claim',
      );
      await app.jobs.enqueue(ANONYMOUS, [{ type: 'test.job', args: [] }], { pending: false });
      const first = await delivery(1);
      expect(store.claims).toBe(2);

      await app.settlement.ack(ANONYMOUS, 'w1', [{ jobId: first.id, leaseToken: first.lease!.token }]);
      // A claim the settlement woke would run now: the memory store claims within the turn.
      await new Promise(setImmediate);

      expect(store.claims).toBe(2);
      await app.jobs.enqueue(ANONYMOUS, [{ type: 'test.job', args: [] }], { pending: false });
      const second = await delivery(2);
      await app.settlement.ack(ANONYMOUS, 'w1', [{ jobId: second.id, leaseToken: second.lease!.token }]);
      await new Promise(setImmediate);
      expect(store.claims).toBe(3);
      session.end('client_cancelled');
      await recording;
      app.streams.stop();
    });

    it('claims when a worker settles a job if its queue still holds jobs its limits kept back', async () => {
      await h.register('w1', { concurrency: 1 });
      await h.register('w2', { concurrency: 1 });
      await h.app.queues.setLimits(ANONYMOUS, 'default', { maxActive: 1 });
      const first = await h.enqueue();
      const second = await h.enqueue();
      const sessions = [await h.openFetch('w1'), await h.openFetch('w2')];
      const [one, two] = sessions.map((session) => pulledDeliveries(h.app.streams, session));
      const firstBatch = await one!.next();
      expect(firstBatch.done === true ? [] : firstBatch.value.map((job) => job.id)).toEqual([first.id]);
      // w2's claim finds the second job held back by the queue's max active: the queue is not empty.
      const held = two!.next();
      const next = one!.next();

      const leaseToken = firstBatch.done === true ? '' : firstBatch.value[0]!.lease!.token;
      await h.app.settlement.ack(ANONYMOUS, 'w1', [{ jobId: first.id, leaseToken }]);

      const secondBatch = await next;
      expect(secondBatch.done === true ? [] : secondBatch.value.map((job) => job.id)).toEqual([second.id]);
      for (const session of sessions) session.end('client_cancelled');
      expect(await held).toEqual({ done: true, value: undefined });
    });

    it('ends the stream when the worker is directed away from running', async () => {
      await h.register('w1');
      const session = await h.openFetch('w1');
      const next = pulledDeliveries(h.app.streams, session).next();

      await h.app.workers.direct(ANONYMOUS, { workerId: 'w1' }, 'quiet');

      expect((await next).done).toBe(true);
      expect(session.endReason).toBe('not_running');
    });

    it('ends the stream when the worker deregisters', async () => {
      await h.register('w1');
      const session = await h.openFetch('w1');
      const next = pulledDeliveries(h.app.streams, session).next();

      await h.app.workers.deregister(ANONYMOUS, 'w1');

      expect((await next).done).toBe(true);
      expect(session.endReason).toBe('worker_removed');
    });

    it('keeps no batch it delivered while it waits for the next one', async () => {
      await h.register('w1');
      await h.enqueue();
      const session = await h.openFetch('w1');
      let delivered: WeakRef<Job[]> | undefined;
      const sent = new Progress();
      const loop = h.app.streams.deliver(session, async (jobs) => {
        delivered = new WeakRef(jobs);
        sent.changed();
      });
      await sent.until(
        () => delivered !== undefined,
        () => 'the first batch',
      );
      // The loop waits for the next wake; a weak reference holds its target until the turn it was made in ends.
      await new Promise(setImmediate);

      collectGarbage();

      expect(delivered!.deref()).toBeUndefined();
      session.end('client_cancelled');
      await loop;
    });

    it('releases the jobs it claimed for a stream that closed meanwhile, without spending an attempt', async () => {
      await h.register('w1');
      const job = await h.enqueue();
      const session = await h.openFetch('w1');
      const deliveries = pulledDeliveries(h.app.streams, session);

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
