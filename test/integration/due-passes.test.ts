import { randomUUID } from 'node:crypto';
import type { Delivery, FetchResponse } from '../../gen/ojs/server/v1/worker_service';
import { JobState } from '../../gen/ojs/server/v1/job';
import { enqueueOne, getJob } from '../support/jobs';
import { ManualClock } from '../support/manual-clock';
import { shareServer } from '../support/shared-server';
import { TestWorker } from '../support/test-worker';

const hasDeliveries = (m: FetchResponse): boolean => m.deliveries.length > 0;
/** Longer than any test: a job these tests see promoted was promoted at its time, not by the idle pass. */
const HOUR_MS = 3_600_000;

/**
 * The running server promotes a scheduled or retryable job, and fires a
 * cron schedule's tick, when it falls due: each pass sleeps until the
 * earliest due time it knows of, and one that comes sooner is announced by
 * the store. The passes' idle intervals here are an hour, so everything
 * these tests wait for came on time.
 */
describe('background passes when things fall due', () => {
  const clock = new ManualClock();
  const shared = shareServer({
    clock,
    runMaintenance: true,
    maintenance: { promoteIntervalMs: HOUR_MS, reapIntervalMs: HOUR_MS, scheduleIntervalMs: HOUR_MS },
    protocol: { heartbeatTimeoutMs: HOUR_MS },
  });

  async function fetchingWorker() {
    const queue = `q-${randomUUID().slice(0, 8)}`;
    const worker = await TestWorker.register(shared.clients, { queues: [queue] });
    const fetch = shared.closeAfterTest(worker.openFetch());
    const next = async (): Promise<Delivery> => (await fetch.nextMatching(hasDeliveries)).deliveries[0]!;
    return { worker, queue, next };
  }

  it('delivers a scheduled job when its time comes', async () => {
    const { queue, next } = await fetchingWorker();
    const job = await enqueueOne(shared.clients, { queue, scheduledAt: new Date(clock.now() + 60_000) });
    clock.advance(59_999);
    expect((await getJob(shared.clients, job.id)).state).toBe(JobState.JOB_STATE_SCHEDULED);
    clock.advance(1);
    expect((await next()).job).toMatchObject({ id: job.id, attempt: 1 });
  });

  it('delivers a retry that falls due before a job scheduled earlier, at its own time', async () => {
    const { worker, queue, next } = await fetchingWorker();
    const later = await enqueueOne(shared.clients, { queue, scheduledAt: new Date(clock.now() + 600_000) });
    const failing = await enqueueOne(shared.clients, { queue });
    const reply = await worker.fail(await next(), { type: 'Boom' });
    expect(reply.state).toBe(JobState.JOB_STATE_RETRYABLE);
    clock.advance(reply.nextRetryAt!.getTime() - clock.now());
    expect((await next()).job).toMatchObject({ id: failing.id, attempt: 2 });
    expect((await getJob(shared.clients, later.id)).state).toBe(JobState.JOB_STATE_SCHEDULED);
  });

  it('fires a cron tick at its time, for a schedule registered after the pass went to sleep', async () => {
    const { queue, next } = await fetchingWorker();
    const { schedule } = await shared.clients.schedules.registerSchedule({
      schedule: { name: `tick-${queue}`, cron: '* * * * *', template: { type: 'cron.job', args: [], queue } },
    });
    clock.advance(schedule!.nextRunAt!.getTime() - clock.now());
    expect((await next()).job).toMatchObject({ type: 'cron.job', meta: { cron_name: `tick-${queue}` } });
  });
});
