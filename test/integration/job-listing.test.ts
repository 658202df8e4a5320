import { randomUUID } from 'node:crypto';
import { Status } from 'nice-grpc';
import { HandlerCode, JobState, type Job } from '../../gen/ojs/server/v1/job';
import { ListOrder } from '../../gen/ojs/server/v1/operator_service';
import type { FetchResponse } from '../../gen/ojs/server/v1/worker_service';
import { enqueue, enqueueOne } from '../support/jobs';
import { listAllJobIds, listJobIds } from '../support/job-listing';
import { ManualClock } from '../support/manual-clock';
import { objectContaining } from '../support/matchers';
import { rpcError } from '../support/rpc-error';
import { shareServer } from '../support/shared-server';
import { TestWorker } from '../support/test-worker';

const S = JobState;
const OLDEST = ListOrder.LIST_ORDER_OLDEST_FIRST;
const NEWEST = ListOrder.LIST_ORDER_NEWEST_FIRST;
const hasDeliveries = (m: FetchResponse): boolean => m.deliveries.length > 0;
const newQueue = (): string => `q-${randomUUID().slice(0, 8)}`;
const idsOf = (jobs: readonly Job[]): string[] => jobs.map((j) => j.id);

/** ListJobs (ojs-admin-api 7, ojs-dead-letter 9): filters, orders, page sizes and cursors. */
describe('ListJobs', () => {
  const clock = new ManualClock();
  const shared = shareServer({ clock, protocol: { heartbeatTimeoutMs: 3_600_000 } });

  /** Jobs enqueued one at a time, a second apart, so that their creation times differ. */
  async function enqueueSpaced(queue: string, count: number, job: { type?: string; scheduledAt?: Date } = {}): Promise<Job[]> {
    const made: Job[] = [];
    for (let i = 0; i < count; i++) {
      made.push(await enqueueOne(shared.clients, { queue, ...job }));
      clock.advance(1_000);
    }
    return made;
  }

  it('lists a queue by state and type, newest first unless asked for oldest first', async () => {
    const queue = newQueue();
    const [mail, cancelled, report] = [
      await enqueueOne(shared.clients, { queue, type: 'mail.send' }),
      await enqueueOne(shared.clients, { queue, type: 'mail.send' }),
      await enqueueOne(shared.clients, { queue, type: 'report.build' }),
    ];
    clock.advance(1_000);
    const scheduled = await enqueueOne(shared.clients, { queue, type: 'mail.send', scheduledAt: new Date(clock.now() + 3_600_000) });
    clock.advance(1_000);
    await shared.clients.jobs.cancelJob({ jobId: cancelled.id });
    await enqueueOne(shared.clients, { queue: newQueue(), type: 'mail.send' });

    const available = { states: [S.JOB_STATE_AVAILABLE], queue };
    expect((await listJobIds(shared.clients, available)).ids).toEqual([report.id, mail.id]);
    expect((await listJobIds(shared.clients, available, { order: NEWEST })).ids).toEqual([report.id, mail.id]);
    expect((await listJobIds(shared.clients, available, { order: OLDEST })).ids).toEqual([mail.id, report.id]);
    // Every state: each job by when it became available, was created or finished.
    expect((await listJobIds(shared.clients, { queue, type: 'mail.send' }, { order: OLDEST })).ids).toEqual([
      mail.id,
      scheduled.id,
      cancelled.id,
    ]);
    expect((await listJobIds(shared.clients, { queue, type: 'mail.send' })).ids).toEqual([cancelled.id, scheduled.id, mail.id]);
    const twoStates = await listJobIds(shared.clients, { queue, states: [S.JOB_STATE_SCHEDULED, S.JOB_STATE_CANCELLED] });
    expect(twoStates.jobs.map((j) => [j.id, j.state])).toEqual([
      [cancelled.id, S.JOB_STATE_CANCELLED],
      [scheduled.id, S.JOB_STATE_SCHEDULED],
    ]);
    expect(twoStates.nextPageToken).toBe('');
  });

  it('selects by creation time, bounds included, whatever the state', async () => {
    const queue = newQueue();
    const from = clock.now() + 1_000;
    const available = await enqueueSpaced(queue, 4);
    const scheduled = await enqueueSpaced(queue, 4, { scheduledAt: new Date(clock.now() + 3_600_000) });
    const createdIn = (after: number, before: number) => ({ createdAfter: new Date(after), createdBefore: new Date(before) });
    expect((await listJobIds(shared.clients, { queue, ...createdIn(from, from + 1_000) }, { order: OLDEST })).ids).toEqual(
      idsOf(available.slice(1, 3)),
    );
    expect(
      (
        await listJobIds(
          shared.clients,
          { queue, states: [S.JOB_STATE_SCHEDULED], ...createdIn(from + 4_000, from + 5_000) },
          { order: OLDEST },
        )
      ).ids,
    ).toEqual(idsOf(scheduled.slice(1, 3)));
    expect((await listJobIds(shared.clients, { queue, createdAfter: new Date(clock.now()) })).ids).toEqual([]);
  });

  it('selects by finishing time, leaving out jobs that have not finished', async () => {
    const queue = newQueue();
    const jobs = await enqueue(shared.clients, { queue }, { queue }, { queue }, { queue });
    const finishedAt: number[] = [];
    for (const job of jobs.slice(0, 3)) {
      clock.advance(1_000);
      finishedAt.push(clock.now());
      await shared.clients.jobs.cancelJob({ jobId: job.id });
    }
    const between = { finishedAfter: new Date(finishedAt[1]!), finishedBefore: new Date(finishedAt[2]!) };
    expect((await listJobIds(shared.clients, { queue, ...between }, { order: OLDEST })).ids).toEqual(idsOf(jobs.slice(1, 3)));
    const cancelledBefore = { queue, states: [S.JOB_STATE_CANCELLED], finishedBefore: new Date(finishedAt[1]!) };
    expect((await listJobIds(shared.clients, cancelledBefore)).ids).toEqual(idsOf(jobs.slice(0, 2)).toReversed());
    // The fourth job is still available: a finishing-time filter never selects it.
    expect((await listJobIds(shared.clients, { queue, finishedAfter: new Date(0) })).ids).toHaveLength(3);
  });

  it('answers 100 jobs a page by default and refuses a page size over 1,000', async () => {
    const queue = newQueue();
    const jobs = await enqueue(shared.clients, ...Array.from({ length: 101 }, () => ({ queue })));
    const first = await listJobIds(shared.clients, { queue }, { order: OLDEST });
    expect(first.ids).toEqual(idsOf(jobs.slice(0, 100)));
    expect(first.nextPageToken).not.toBe('');
    expect((await listAllJobIds(shared.clients, { queue }, { order: OLDEST })).ids).toEqual(idsOf(jobs));
    expect((await listJobIds(shared.clients, { queue }, { pageSize: 1_000 })).ids).toHaveLength(101);
    for (const pageSize of [1_001, -1]) {
      expect(await rpcError(listJobIds(shared.clients, { queue }, { pageSize }))).toMatchObject({
        code: Status.INVALID_ARGUMENT,
        reason: 'invalid_request',
        fields: ['page_size'],
      });
    }
  });

  it.each([
    ['oldest', OLDEST],
    ['newest', NEWEST],
  ])('pages through every job exactly once, %s first, in the order of one large page', async (_, order) => {
    const queue = newQueue();
    const available = await enqueueSpaced(queue, 9);
    const scheduled = await enqueueSpaced(queue, 7, { scheduledAt: new Date(clock.now() + 3_600_000) });
    const cancelled = await enqueueSpaced(queue, 7);
    for (const job of cancelled) await shared.clients.jobs.cancelJob({ jobId: job.id });
    const whole = await listJobIds(shared.clients, { queue }, { order, pageSize: 1_000 });
    expect(whole.ids.toSorted()).toEqual(idsOf([...available, ...scheduled, ...cancelled]).toSorted());
    const paged = await listAllJobIds(shared.clients, { queue }, { order, pageSize: 4 });
    expect(paged.ids).toEqual(whole.ids);
    expect(paged.pages).toBeGreaterThanOrEqual(6);
  });

  it('neither repeats nor skips a job that stays in the filtered set while others leave and join between pages', async () => {
    const queue = newQueue();
    const jobs = await enqueue(shared.clients, ...Array.from({ length: 20 }, () => ({ queue })));
    const worker = await TestWorker.register(shared.clients, { queues: [queue], concurrency: 2 });
    const joined: string[] = [];
    const leftAhead = new Set<string>();
    const listed = await listAllJobIds(
      shared.clients,
      { queue, states: [S.JOB_STATE_AVAILABLE] },
      {
        order: OLDEST,
        pageSize: 5,
        between: async (listedSoFar) => {
          // A job leaves behind the cursor, another ahead of it; two join (after it: oldest first is run order).
          const ahead = [...idsOf(jobs), ...joined].filter((id) => !listedSoFar.includes(id) && !leftAhead.has(id))[1];
          for (const jobId of [listedSoFar.at(-2)!, ...(ahead === undefined ? [] : [ahead])])
            await shared.clients.jobs.cancelJob({ jobId });
          if (ahead !== undefined) leftAhead.add(ahead);
          if (listedSoFar.length === 5) {
            // The first two in run order, already listed, are claimed.
            const fetch = worker.openFetch();
            shared.closeAfterTest(fetch);
            await fetch.nextMatching(hasDeliveries);
          }
          clock.advance(1_000);
          joined.push(...idsOf(await enqueue(shared.clients, { queue }, { queue })));
        },
      },
    );
    expect(listed.ids).toEqual([...idsOf(jobs), ...joined].filter((id) => !leftAhead.has(id)));
    expect(listed.pages).toBeGreaterThan(4);
  });

  it('keeps its place among jobs listed by time, newest first, while others leave and join', async () => {
    const queue = newQueue();
    const scheduledAt = new Date(clock.now() + 3_600_000);
    const jobs = await enqueueSpaced(queue, 15, { scheduledAt });
    const leftAhead = new Set<string>();
    const listed = await listAllJobIds(
      shared.clients,
      { queue, states: [S.JOB_STATE_SCHEDULED] },
      {
        order: NEWEST,
        pageSize: 4,
        between: async (listedSoFar) => {
          const ahead = idsOf(jobs)
            .toReversed()
            .find((id) => !listedSoFar.includes(id) && !leftAhead.has(id));
          for (const jobId of [listedSoFar.at(-1)!, ...(ahead === undefined ? [] : [ahead])])
            await shared.clients.jobs.cancelJob({ jobId });
          if (ahead !== undefined) leftAhead.add(ahead);
          // Created now: newer than the cursor, so not in what remains of a newest-first listing.
          await enqueueSpaced(queue, 1, { scheduledAt });
        },
      },
    );
    expect(listed.ids).toEqual(
      idsOf(jobs)
        .toReversed()
        .filter((id) => !leftAhead.has(id)),
    );
  });

  it.each([
    ['garbage', 'garbage!'],
    ['a base64url text that is no cursor', Buffer.from('nonsense').toString('base64url')],
    ['an overlong token', 'a'.repeat(600)],
    ['a token of zero bytes', 'AAAA'],
  ])('refuses %s as a page token', async (_, pageToken) => {
    expect(await rpcError(listJobIds(shared.clients, {}, { pageToken }))).toMatchObject({
      code: Status.INVALID_ARGUMENT,
      reason: 'invalid_request',
      fields: ['page_token'],
    });
  });

  it('refuses a filter with an unknown state or a malformed queue', async () => {
    expect(await rpcError(listJobIds(shared.clients, { states: [S.UNRECOGNIZED] }))).toMatchObject({
      code: Status.INVALID_ARGUMENT,
      fields: ['filter.states[0]'],
    });
    expect(await rpcError(listJobIds(shared.clients, { queue: 'Not A Queue' }))).toMatchObject({
      code: Status.INVALID_ARGUMENT,
      fields: ['filter.queue'],
    });
  });

  it('lists the dead letter: discarded jobs with their error history, by dead letter and error type', async () => {
    const queue = newQueue();
    const worker = await TestWorker.register(shared.clients, { queues: [queue] });
    const fetch = worker.openFetch();
    shared.closeAfterTest(fetch);
    const next = async () => (await fetch.nextMatching(hasDeliveries)).deliveries[0]!;
    const retried = await enqueueOne(shared.clients, { queue, retry: { maxAttempts: 2 } });
    const first = await worker.fail(await next(), { type: 'SmtpError', message: 'try 1' });
    clock.advance(first.nextRetryAt!.getTime() - clock.now());
    await shared.server.runMaintenance();
    await worker.fail(await next(), { type: 'SmtpError', message: 'try 2' });
    const dead = await enqueueOne(shared.clients, { queue });
    await worker.fail(await next(), { type: 'BadInput', code: HandlerCode.HANDLER_CODE_DEAD_LETTER });

    const { jobs } = await listJobIds(shared.clients, { queue, states: [S.JOB_STATE_DISCARDED] }, { order: OLDEST });
    expect(jobs).toEqual([
      objectContaining({
        id: retried.id,
        state: S.JOB_STATE_DISCARDED,
        attempt: 2,
        deadLetter: false,
        error: objectContaining({ type: 'SmtpError', message: 'try 2', attempt: 2 }),
        errors: [
          objectContaining({ type: 'SmtpError', message: 'try 1', attempt: 1 }),
          objectContaining({ type: 'SmtpError', message: 'try 2', attempt: 2 }),
        ],
      }),
      objectContaining({ id: dead.id, deadLetter: true, errors: [objectContaining({ type: 'BadInput' })] }),
    ]);
    expect((await listJobIds(shared.clients, { queue, deadLetter: true })).ids).toEqual([dead.id]);
    expect((await listJobIds(shared.clients, { queue, deadLetter: false })).ids).toEqual([retried.id]);
    expect((await listJobIds(shared.clients, { queue, errorType: 'SmtpError' })).ids).toEqual([retried.id]);
  });
});
