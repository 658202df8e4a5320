import { randomUUID } from 'node:crypto';
import type { JobEvent } from '../../gen/ojs/server/v1/operator_service';
import type { FetchResponse } from '../../gen/ojs/server/v1/worker_service';
import { EventWatch } from '../support/event-watch';
import { enqueue, enqueueOne } from '../support/jobs';
import { ManualClock } from '../support/manual-clock';
import { shareServer } from '../support/shared-server';
import type { StreamReader } from '../support/streams';
import { TestWorker } from '../support/test-worker';

const newQueue = (): string => `q-${randomUUID().slice(0, 8)}`;
const SECOND = { seconds: 1, nanos: 0 };

/** The rate-limit events of queue limits on WatchEvents (ojs-rate-limiting 11.1), sampled per queue and window. */
describe('rate limit events', () => {
  const clock = new ManualClock();
  // A short keepalive: each one makes every open Fetch stream claim again (and the watcher's first message
  // says the server follows the log for it). The clock only moves when a test moves it.
  const shared = shareServer({ clock, protocol: { streamKeepaliveMs: 50, heartbeatTimeoutMs: 24 * 3_600_000 } });

  async function watch(queue: string, types: string[]): Promise<EventWatch> {
    const opened = EventWatch.open(shared.clients, { queues: [queue], types });
    shared.closeAfterTest(opened);
    return opened.opened();
  }

  /** Open Fetch streams of `count` workers of `queue`. */
  async function fetchStreams(queue: string, count: number): Promise<StreamReader<FetchResponse>[]> {
    const workers = await Promise.all(Array.from({ length: count }, () => TestWorker.register(shared.clients, { queues: [queue] })));
    return workers.map((worker) => shared.closeAfterTest(worker.openFetch()));
  }

  /**
   * Resolves once each stream has sent two keepalives stamped `at` or later:
   * a stream claims before each keepalive, so each has claimed at least once
   * since the clock reached `at`.
   */
  async function claimedSince(streams: StreamReader<FetchResponse>[], at: number): Promise<void> {
    const keepaliveSince = (m: FetchResponse): boolean => m.deliveries.length === 0 && m.serverTime!.getTime() >= at;
    await Promise.all(
      streams.map(async (stream) => {
        await stream.nextMatching(keepaliveSince);
        await stream.nextMatching(keepaliveSince);
      }),
    );
  }

  const limitEvents = (events: readonly JobEvent[]): JobEvent[] => events.filter((e) => e.type.startsWith('rate_limit.'));

  it('tells one exceeded per window while several Fetch streams are held back, and a released before the next start', async () => {
    const queue = newQueue();
    const key = `queue:${queue}`;
    const events = await watch(queue, ['rate_limit.*', 'job.started']);
    await shared.clients.operator.setQueueLimits({ queue, limits: { rate: { limit: 2, period: SECOND } } });
    const jobs = await enqueue(shared.clients, ...Array.from({ length: 6 }, () => ({ queue })));
    const start = clock.now();
    // Opened after the enqueue: every claim of every stream finds jobs waiting.
    const streams = await fetchStreams(queue, 3);
    await claimedSince(streams, start);
    clock.advance(1_000);
    await claimedSince(streams, start + 1_000);
    clock.advance(1_000);
    const got = await events.untilEvent((e) => e.type === 'job.started' && e.jobId === jobs[5]!.id, 'the start of the last job');

    const exceeded = (time: number) => ({
      type: 'rate_limit.exceeded',
      subject: key,
      queue,
      source: 'ojs://test/scheduler',
      time: new Date(time),
      data: { key, strategy: 'rate', limit: 2, current: 2 },
    });
    const released = (time: number, jobId: string) => ({
      type: 'rate_limit.released',
      subject: key,
      queue,
      jobId,
      time: new Date(time),
      data: { key, strategy: 'rate', job_id: jobId },
    });
    expect(limitEvents(got)).toEqual([
      expect.objectContaining(exceeded(start)),
      expect.objectContaining(released(start + 1_000, jobs[2]!.id)),
      expect.objectContaining(exceeded(start + 1_000)),
      expect.objectContaining(released(start + 2_000, jobs[4]!.id)),
    ]);
    // Each released comes just before the start it tells of.
    const order = got.map((e) => (e.type === 'job.started' ? e.jobId : e.type));
    expect(order.indexOf('rate_limit.released')).toBe(order.indexOf(jobs[2]!.id) - 1);
    expect(order.lastIndexOf('rate_limit.released')).toBe(order.indexOf(jobs[4]!.id) - 1);
  });

  it('tells a max active of 0 holding jobs back once, and a released naming no job when the limits are cleared', async () => {
    const queue = newQueue();
    const key = `queue:${queue}`;
    const events = await watch(queue, ['rate_limit.exceeded', 'rate_limit.released', 'job.started']);
    await shared.clients.operator.setQueueLimits({ queue, limits: { maxActive: 0 } });
    const job = await enqueueOne(shared.clients, { queue });
    const streams = await fetchStreams(queue, 2);
    await claimedSince(streams, clock.now());
    await shared.clients.operator.setQueueLimits({ queue });
    const got = await events.untilEvent((e) => e.type === 'job.started', 'the start of the job');
    expect(got).toEqual([
      expect.objectContaining({
        type: 'rate_limit.exceeded',
        subject: key,
        data: { key, strategy: 'concurrency', limit: 0, current: 0 },
      }),
      expect.objectContaining({ type: 'rate_limit.released', source: 'ojs://test/api', jobId: '', data: { key, strategy: 'concurrency' } }),
      expect.objectContaining({ type: 'job.started', jobId: job.id }),
    ]);
  });
});
