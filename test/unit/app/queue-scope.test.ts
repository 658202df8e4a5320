import { uuidv7 } from 'uuidv7';
import type { LifecycleEvent } from '../../../src/domain/event-catalog';
import type { Job } from '../../../src/domain/job';
import { ANONYMOUS, ROLES, type Principal } from '../../../src/domain/principal';
import { AppHarness } from './app-harness';

/** A tenant limited to the billing queue, and one limited to two queues. */
const BILLING: Principal = { name: 'billing', roles: new Set(ROLES), queues: new Set(['billing']) };
const TWO_QUEUES: Principal = { name: 'two', roles: new Set(ROLES), queues: new Set(['billing', 'reports']) };
const NO_FILTER = { states: [], queue: '', type: '', schedule: '', errorType: '' };

describe('a principal limited to some queues', () => {
  let h: AppHarness;
  let mailJob: Job;
  let billingJob: Job;

  beforeEach(async () => {
    h = new AppHarness();
    mailJob = await h.enqueue({ queue: 'mail' });
    billingJob = await h.enqueue({ queue: 'billing' }, {}, BILLING);
  });

  afterEach(async () => {
    await h.stop();
  });

  it('enqueues only into its queues, refusing a whole batch that names another with PERMISSION_DENIED', async () => {
    const batch = h.app.jobs.enqueue(
      BILLING,
      [
        { type: 'a', args: [], queue: 'billing' },
        { type: 'b', args: [], queue: 'mail' },
      ],
      { pending: false },
    );

    await expect(batch).rejects.toMatchObject({ code: 'permission_denied', metadata: { field: 'jobs[1].queue', queue: 'mail' } });
    const listed = await h.app.listing.list(ANONYMOUS, { filter: NO_FILTER, order: 'oldest', pageSize: 10 });
    expect(listed.items.map((job) => job.id).toSorted()).toEqual([mailJob.id, billingJob.id].toSorted());
  });

  it('refuses a job without a queue, which would go to the default queue', async () => {
    await expect(h.enqueue({}, {}, BILLING)).rejects.toMatchObject({ code: 'permission_denied', metadata: { queue: 'default' } });
  });

  it('registers workers only for its queues', async () => {
    await expect(h.register('w-mail', { queues: ['billing', 'mail'] }, BILLING)).rejects.toMatchObject({
      code: 'permission_denied',
      metadata: { field: 'queues[1]' },
    });
    await h.register('w-billing', { queues: ['billing'] }, BILLING);
  });

  it('fetches only from queues it may still use', async () => {
    await h.register('w1', { queues: ['billing', 'reports'] }, TWO_QUEUES);
    // The same principal after its queues were narrowed (its tokens file reloaded).
    const narrowed: Principal = { ...TWO_QUEUES, queues: new Set(['billing']) };

    await expect(h.app.streams.openFetch(narrowed, 'w1', [], 0)).rejects.toMatchObject({
      code: 'permission_denied',
      metadata: { field: 'queues[1]', queue: 'reports' },
    });
    expect((await h.claim('w1', TWO_QUEUES)).map((job) => job.id)).toEqual([billingJob.id]);
  });

  it.each([
    ['GetJob', (harness: AppHarness, caller: Principal, jobId: string) => harness.app.jobs.get(caller, jobId)],
    ['CancelJob', (harness: AppHarness, caller: Principal, jobId: string) => harness.app.jobs.cancel(caller, jobId)],
    ['ActivateJob', (harness: AppHarness, caller: Principal, jobId: string) => harness.app.jobs.activate(caller, jobId)],
    ['RetryJob', (harness: AppHarness, caller: Principal, jobId: string) => harness.app.jobs.retry(caller, jobId)],
    [
      'WaitForJob',
      (harness: AppHarness, caller: Principal, jobId: string) => harness.app.results.wait(caller, jobId, 1, new AbortController().signal),
    ],
  ])('answers %s of a job in another queue as if the job did not exist, and leaves it alone', async (_, call) => {
    const missing = uuidv7();
    await expect(call(h, BILLING, mailJob.id)).rejects.toMatchObject({
      code: 'not_found',
      message: `job ${mailJob.id} not found`,
      metadata: { job_id: mailJob.id },
    });
    await expect(call(h, BILLING, missing)).rejects.toMatchObject({
      code: 'not_found',
      message: `job ${missing} not found`,
      metadata: { job_id: missing },
    });
    expect(await h.job(mailJob.id)).toEqual(mailJob);
  });

  it('sees and cancels the jobs of its own queues', async () => {
    expect((await h.app.jobs.get(BILLING, billingJob.id)).id).toBe(billingJob.id);
    expect((await h.app.jobs.cancel(BILLING, billingJob.id)).state).toBe('cancelled');
  });

  it('lists only its queues', async () => {
    await h.enqueue({ queue: 'reports' });
    const page = await h.app.queues.list(TWO_QUEUES, { limit: 10 });
    expect(page.items.map((counts) => counts.queue)).toEqual(['billing', 'reports']);
    expect((await h.app.queues.list(ANONYMOUS, { limit: 10 })).items.map((counts) => counts.queue)).toEqual(['billing', 'mail', 'reports']);
  });

  it('lists jobs of its queue: its only queue by default, another queue refused, and one must be named among several', async () => {
    const listing = (caller: Principal, queue: string) =>
      h.app.listing.list(caller, { filter: { ...NO_FILTER, queue }, order: 'oldest', pageSize: 10 });

    expect((await listing(BILLING, '')).items.map((job) => job.id)).toEqual([billingJob.id]);
    await expect(listing(BILLING, 'mail')).rejects.toMatchObject({ code: 'permission_denied', metadata: { field: 'filter.queue' } });
    await expect(listing(TWO_QUEUES, '')).rejects.toMatchObject({ code: 'permission_denied', metadata: { field: 'filter.queue' } });
    expect((await listing(TWO_QUEUES, 'billing')).items.map((job) => job.id)).toEqual([billingJob.id]);
  });

  it('pauses and reads the stats of its queues only', async () => {
    await expect(h.app.queues.setPaused(BILLING, 'mail', true)).rejects.toMatchObject({ code: 'permission_denied' });
    await expect(h.app.queues.stats(BILLING, 'mail')).rejects.toMatchObject({ code: 'permission_denied' });
    expect((await h.app.queues.stats(ANONYMOUS, 'mail')).counts.paused).toBe(false);
    expect((await h.app.queues.setPaused(BILLING, 'billing', true)).queue).toBe('billing');
  });

  it('changes in bulk only the jobs of its queues: another queue named by id is NOT_FOUND, a filter stays within its queue', async () => {
    const byIds = await h.app.bulk.apply(BILLING, {
      operation: 'cancel',
      selection: { kind: 'ids', ids: [mailJob.id, billingJob.id] },
      dryRun: false,
    });
    expect(byIds.items.map(({ jobId, outcome }) => [jobId, outcome.ok ? 'ok' : outcome.error.message])).toEqual([
      [mailJob.id, `job ${mailJob.id} not found`],
      [billingJob.id, 'ok'],
    ]);
    expect((await h.job(mailJob.id)).state).toBe('available');

    const other = await h.enqueue({ queue: 'billing' }, {}, BILLING);
    const byFilter = await h.app.bulk.apply(BILLING, {
      operation: 'cancel',
      selection: { kind: 'filter', filter: NO_FILTER, limit: 0 },
      dryRun: false,
    });
    expect(byFilter.items.map(({ jobId }) => jobId)).toEqual([other.id]);
    expect((await h.job(mailJob.id)).state).toBe('available');
    await expect(
      h.app.bulk.apply(BILLING, {
        operation: 'cancel',
        selection: { kind: 'filter', filter: { ...NO_FILTER, queue: 'mail' }, limit: 0 },
        dryRun: false,
      }),
    ).rejects.toMatchObject({ code: 'permission_denied' });
  });

  it('watches only the events of its queues, and may not name another', async () => {
    await expect(
      h.app.events.open(BILLING, { types: [], queues: ['mail'], jobTypes: [], jobIds: [], after: '', includeHeartbeats: false }),
    ).rejects.toMatchObject({ code: 'permission_denied', metadata: { field: 'queues[0]' } });
    const stream = await h.app.events.open(BILLING, {
      types: [],
      queues: [],
      jobTypes: [],
      jobIds: [],
      after: '',
      includeHeartbeats: false,
    });
    try {
      await h.register('w-anyone', { queues: ['mail'] });
      await h.enqueue({ queue: 'mail' });
      const seen = await h.enqueue({ queue: 'billing' }, {}, BILLING);
      const first = await firstOf(stream.events);
      expect(first).toMatchObject({ type: 'job.enqueued', jobId: seen.id, queue: 'billing' });
    } finally {
      stream.close();
    }
  });

  describe('steering workers', () => {
    beforeEach(async () => {
      await h.register('w-mail', { queues: ['mail'], labels: ['blue'] });
      await h.register('w-billing', { queues: ['billing'], labels: ['blue'] }, BILLING);
      await h.register('w-both', { queues: ['billing', 'mail'], labels: ['blue'] });
    });

    it('reaches only the workers of its queues: by label it skips others, by id another is NOT_FOUND, by queue it names its own', async () => {
      expect(await h.app.workers.direct(BILLING, { label: 'blue' }, 'quiet')).toEqual(['w-billing']);
      await expect(h.app.workers.direct(BILLING, { workerId: 'w-both' }, 'quiet')).rejects.toMatchObject({
        code: 'not_found',
        message: 'worker w-both is not registered',
      });
      await expect(h.app.workers.direct(BILLING, { queue: 'mail' }, 'quiet')).rejects.toMatchObject({ code: 'permission_denied' });
      expect((await h.app.workers.get('w-both')).worker.directive).toBeUndefined();
    });

    it('lists only the workers of its queues', async () => {
      const page = await h.app.workers.list(BILLING, {}, { limit: 10 });
      expect(page.items.map(({ worker }) => worker.workerId)).toEqual(['w-billing']);
    });

    it('leaves an unscoped operator steering every worker, whoever registered it', async () => {
      const operator: Principal = { name: 'ops', roles: new Set(['operator']) };
      expect(await h.app.workers.direct(operator, { label: 'blue' }, 'quiet')).toEqual(['w-billing', 'w-both', 'w-mail']);
    });
  });
});

/** The first event of a stream (the stream stays open). */
async function firstOf(events: AsyncIterable<LifecycleEvent>): Promise<LifecycleEvent | undefined> {
  for await (const event of events) return event;
  return undefined;
}
