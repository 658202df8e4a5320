import { randomUUID } from 'node:crypto';
import { Status } from 'nice-grpc';
import { JobState } from '../../gen/ojs/server/v1/job';
import type { Delivery, FetchResponse } from '../../gen/ojs/server/v1/worker_service';
import { enqueue, enqueueOne, getJob } from '../support/jobs';
import { ManualClock } from '../support/manual-clock';
import { rpcError } from '../support/rpc-error';
import { shareServer } from '../support/shared-server';
import { TestWorker } from '../support/test-worker';

const hasDeliveries = (m: FetchResponse): boolean => m.deliveries.length > 0;
const newQueue = (): string => `q-${randomUUID().slice(0, 8)}`;
const idsOf = (deliveries: readonly Delivery[]): string[] => deliveries.map((d) => d.job!.id);
const SECOND = { seconds: 1, nanos: 0 };

/** SetQueueLimits and its effect on open Fetch streams (ojs-rate-limiting 5.1, 5.2, 7.2). */
describe('queue limits', () => {
  const clock = new ManualClock();
  // Keepalives (which also make a Fetch stream look for work) are a minute apart, and
  // workers outlive the clock's jumps: what reaches a stream promptly was carried by a signal or a wake-up.
  const shared = shareServer({ clock, protocol: { heartbeatTimeoutMs: 24 * 3_600_000 } });

  /** A worker of `queue` whose Fetch stream is open and idle (it took a first job). */
  async function idleWorker(queue: string) {
    const worker = await TestWorker.register(shared.clients, { queues: [queue] });
    const fetch = worker.openFetch();
    shared.closeAfterTest(fetch);
    const probe = await enqueueOne(shared.clients, { queue });
    expect(idsOf((await fetch.nextMatching(hasDeliveries)).deliveries)).toEqual([probe.id]);
    return { worker, fetch };
  }

  it('holds back what the rate window does not allow, and delivers it to the open stream when the window reopens', async () => {
    const queue = newQueue();
    const { fetch } = await idleWorker(queue);
    const answer = await shared.clients.operator.setQueueLimits({ queue, limits: { rate: { limit: 2, period: SECOND } } });
    expect(answer.queue).toMatchObject({ name: queue, limits: { rate: { limit: 2, period: SECOND } } });
    // One enqueue, one claim: it takes two and, held back for the third, sets the wake-up before it delivers.
    const jobs = await enqueue(shared.clients, { queue }, { queue }, { queue });
    expect(idsOf((await fetch.nextMatching(hasDeliveries)).deliveries)).toEqual([jobs[0]!.id, jobs[1]!.id]);
    expect((await getJob(shared.clients, jobs[2]!.id)).state).toBe(JobState.JOB_STATE_AVAILABLE);
    clock.advance(999);
    clock.advance(1);
    expect(idsOf((await fetch.nextMatching(hasDeliveries)).deliveries)).toEqual([jobs[2]!.id]);
  });

  it('delivers no more jobs of a queue than its max active, and the next one when a job settles', async () => {
    const queue = newQueue();
    const { worker, fetch } = await idleWorker(queue);
    await shared.clients.operator.setQueueLimits({ queue, limits: { maxActive: 2 } });
    const jobs = await enqueue(shared.clients, { queue }, { queue }, { queue });
    const first = (await fetch.nextMatching(hasDeliveries)).deliveries;
    // The probe job is still active: one more may start.
    expect(idsOf(first)).toEqual([jobs[0]!.id]);
    const stats = await shared.clients.operator.getQueueStats({ queue });
    expect(stats.queue).toMatchObject({ active: 2, available: 2, limits: { maxActive: 2 } });
    await worker.ack(first[0]!);
    expect(idsOf((await fetch.nextMatching(hasDeliveries)).deliveries)).toEqual([jobs[1]!.id]);
  });

  it('clears limits, delivering the held-back jobs at once, and lists a limited queue with its limits', async () => {
    const queue = newQueue();
    const { fetch } = await idleWorker(queue);
    await shared.clients.operator.setQueueLimits({ queue, limits: { maxActive: 0 } });
    const job = await enqueueOne(shared.clients, { queue });
    const listed = await shared.clients.operator.listQueues({ pageSize: 1000 });
    expect(listed.queues.find((q) => q.name === queue)).toMatchObject({ available: 1, limits: { maxActive: 0 } });
    const cleared = await shared.clients.operator.setQueueLimits({ queue });
    expect(cleared.queue?.limits).toBeUndefined();
    expect(idsOf((await fetch.nextMatching(hasDeliveries)).deliveries)).toEqual([job.id]);
  });

  it('refuses limits out of bounds, naming the field', async () => {
    const queue = newQueue();
    const zeroPeriod = await rpcError(shared.clients.operator.setQueueLimits({ queue, limits: { rate: { limit: 1 } } }));
    expect(zeroPeriod.code).toBe(Status.INVALID_ARGUMENT);
    expect(zeroPeriod.fields).toEqual(['limits.rate.period']);
    const tooMany = await rpcError(shared.clients.operator.setQueueLimits({ queue, limits: { rate: { limit: 0, period: SECOND } } }));
    expect(tooMany.fields).toEqual(['limits.rate.limit']);
    const negative = await rpcError(shared.clients.operator.setQueueLimits({ queue, limits: { maxActive: -1 } }));
    expect(negative.fields).toEqual(['limits.max_active']);
  });
});
