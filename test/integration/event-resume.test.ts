import { randomUUID } from 'node:crypto';
import { Status } from 'nice-grpc';
import type { FetchResponse } from '../../gen/ojs/server/v1/worker_service';
import { EventWatch, typesAndSubjects } from '../support/event-watch';
import { enqueueOne } from '../support/jobs';
import { ManualClock } from '../support/manual-clock';
import { rpcError } from '../support/rpc-error';
import { shareServer } from '../support/shared-server';
import { TestWorker } from '../support/test-worker';

const hasDeliveries = (m: FetchResponse): boolean => m.deliveries.length > 0;
const newQueue = (): string => `q-${randomUUID().slice(0, 8)}`;
/** Facts enough to fill several Redis stream nodes (at most 100 entries each), so that even approximate trimming drops the first. */
const MANY_FACTS = 300;

/** WatchEvents resumed after an event id: every later event once, or OUT_OF_RANGE when the log no longer reaches back. */
describe('resuming WatchEvents', () => {
  const clock = new ManualClock();
  // A short keepalive (a watcher's first message tells that the server follows the log for it),
  // and a small log: 200 events, none older than a minute.
  const shared = shareServer({
    clock,
    protocol: { streamKeepaliveMs: 50, heartbeatTimeoutMs: 3_600_000 },
    events: { maxCount: 200, maxAgeMs: 60_000 },
  });

  function watch(request: Parameters<typeof EventWatch.open>[1]): EventWatch {
    const opened = EventWatch.open(shared.clients, request);
    shared.closeAfterTest(opened);
    return opened;
  }

  /** The id of an event recorded now (the enqueue of a job of its own queue). */
  async function eventIdNow(): Promise<string> {
    const queue = newQueue();
    const watcher = await watch({ queues: [queue] }).opened();
    await enqueueOne(shared.clients, { queue });
    const [event] = await watcher.until(
      (e) => e.length > 0,
      () => 'an event',
    );
    watcher.close();
    return event!.id;
  }

  /** `count` changes, one store operation each. */
  async function makeFacts(count: number): Promise<void> {
    const queue = newQueue();
    for (let i = 0; i < count; i++) await enqueueOne(shared.clients, { queue });
  }

  it('sends a watcher that resumes every event it missed, then the live ones, none twice', async () => {
    const queue = newQueue();
    const witness = await watch({ queues: [queue] }).opened();
    const first = await watch({ queues: [queue] }).opened();
    const cancelled = async () => shared.clients.jobs.cancelJob({ jobId: (await enqueueOne(shared.clients, { queue })).id });
    await cancelled();
    const seen = await first.until(
      (e) => e.length === 2,
      () => 'the first two events',
    );
    first.close();
    await cancelled(); // while nobody resumed
    const resumed = watch({ queues: [queue], after: seen[1]!.id });
    const missed = await resumed.until(
      (e) => e.length === 2,
      () => 'the two missed events',
    );
    await cancelled(); // live
    const all = await witness.until(
      (e) => e.length === 6,
      () => 'six events',
    );
    const got = await resumed.until(
      (e) => e.length === 4,
      () => 'the missed and the live events',
    );
    expect(missed.map((e) => e.id)).toEqual(all.slice(2, 4).map((e) => e.id));
    expect(got.map((e) => e.id)).toEqual(all.slice(2).map((e) => e.id));
    expect(got).toEqual(all.slice(2));
  });

  it('resumes between the events of one change: after job.failed comes its job.retrying', async () => {
    const queue = newQueue();
    const witness = await watch({ queues: [queue] }).opened();
    const worker = await TestWorker.register(shared.clients, { queues: [queue] });
    const fetch = worker.openFetch();
    shared.closeAfterTest(fetch);
    const job = await enqueueOne(shared.clients, { queue, retry: { maxAttempts: 3 } });
    await worker.fail((await fetch.nextMatching(hasDeliveries)).deliveries[0]!, { type: 'Flaky' });
    const all = await witness.until(
      (e) => e.length === 4,
      () => 'enqueued, started, failed, retrying',
    );
    expect(typesAndSubjects(all)).toEqual([
      ['job.enqueued', job.id],
      ['job.started', job.id],
      ['job.failed', job.id],
      ['job.retrying', job.id],
    ]);
    const resumed = watch({ queues: [queue], after: all[2]!.id });
    await shared.clients.jobs.cancelJob({ jobId: job.id });
    const got = await resumed.until(
      (e) => e.length === 2,
      () => 'job.retrying and job.cancelled',
    );
    expect(got.map((e) => e.type)).toEqual(['job.retrying', 'job.cancelled']);
    expect(got[0]!.id).toBe(all[3]!.id);
  });

  it('refuses a resume point that is no event id', async () => {
    for (const after of ['garbage', 'evt_', 'hb_worker_1_worker']) {
      expect(await rpcError(watch({ after }).ended())).toMatchObject({
        code: Status.INVALID_ARGUMENT,
        fields: ['after'],
      });
    }
  });

  it('answers OUT_OF_RANGE for a resume point older than the events the log keeps by count', async () => {
    const old = await eventIdNow();
    await makeFacts(MANY_FACTS);
    expect(await rpcError(watch({ after: old }).ended())).toMatchObject({
      code: Status.OUT_OF_RANGE,
      reason: 'out_of_range',
    });
    // A recent one still resumes.
    await watch({ after: await eventIdNow() }).opened();
  });

  it('answers OUT_OF_RANGE for a resume point older than the events the log keeps by age, once maintenance prunes', async () => {
    const old = await eventIdNow();
    await makeFacts(MANY_FACTS / 2);
    clock.advance(120_000);
    const recent = await eventIdNow();
    // Not yet pruned: it resumes.
    await watch({ after: old }).opened();
    await shared.server.runMaintenance();
    expect(await rpcError(watch({ after: old }).ended())).toMatchObject({
      code: Status.OUT_OF_RANGE,
    });
    await watch({ after: recent }).opened();
  });
});
