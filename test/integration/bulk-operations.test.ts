import { randomUUID } from 'node:crypto';
import { Status } from 'nice-grpc';
import { uuidv7 } from 'uuidv7';
import { HandlerCode, JobState, type Job } from '../../gen/ojs/server/v1/job';
import type { BulkResult, JobFilter, JobSelection } from '../../gen/ojs/server/v1/operator_service';
import { WorkerState, type Delivery, type FetchResponse } from '../../gen/ojs/server/v1/worker_service';
import { enqueue, enqueueOne, getJob } from '../support/jobs';
import { listJobIds } from '../support/job-listing';
import { ManualClock } from '../support/manual-clock';
import { rpcError } from '../support/rpc-error';
import { shareServer } from '../support/shared-server';
import { TestWorker } from '../support/test-worker';
import type { DeepPartial } from '../../gen/ojs/server/v1/job';

const S = JobState;
const hasDeliveries = (m: FetchResponse): boolean => m.deliveries.length > 0;
const newQueue = (): string => `q-${randomUUID().slice(0, 8)}`;
const idsOf = (jobs: readonly Job[]): string[] => jobs.map((j) => j.id);
const byIds = (...ids: string[]): DeepPartial<JobSelection> => ({ target: { $case: 'jobIds', value: { ids } } });
const byFilter = (filter: DeepPartial<JobFilter>, more: DeepPartial<JobSelection> = {}): DeepPartial<JobSelection> => ({
  target: { $case: 'filter', value: filter },
  ...more,
});

/** CancelJobs, RetryJobs and DeleteJobs (ojs-bulk-operations): by ids and by filter, dry runs, caps and continuation. */
describe('bulk operations', () => {
  const clock = new ManualClock();
  const shared = shareServer({ clock, protocol: { heartbeatTimeoutMs: 3_600_000 } });

  /** A worker of `queue` with its Fetch stream open, taking its deliveries one at a time. */
  async function fetchingWorker(queue: string, concurrency = 10) {
    const worker = await TestWorker.register(shared.clients, { queues: [queue], concurrency });
    const fetch = worker.openFetch();
    shared.closeAfterTest(fetch);
    const buffered: Delivery[] = [];
    const next = async (): Promise<Delivery> => {
      if (buffered.length === 0) buffered.push(...(await fetch.nextMatching(hasDeliveries)).deliveries);
      return buffered.shift()!;
    };
    return { worker, next };
  }

  const itemsOf = (result: BulkResult | undefined) =>
    result!.items.map(({ jobId, ok, errorCode, state }) => ({ jobId, ok, errorCode, state }));
  const stateOf = async (jobId: string): Promise<JobState> => (await getJob(shared.clients, jobId)).state;

  it('cancels jobs by id, one result per job in request order, stopping an active one on its worker', async () => {
    const queue = newQueue();
    const { worker, next } = await fetchingWorker(queue);
    const active = await enqueueOne(shared.clients, { queue });
    await next();
    const beat = worker.openBeat();
    shared.closeAfterTest(beat);
    await beat.beat(WorkerState.WORKER_STATE_RUNNING, [active.id]);
    const waiting = await enqueueOne(shared.clients, { queue: newQueue() });
    const scheduled = await enqueueOne(shared.clients, { queue: newQueue(), scheduledAt: new Date(clock.now() + 60_000) });
    const cancelled = await enqueueOne(shared.clients, { queue: newQueue() });
    await shared.clients.jobs.cancelJob({ jobId: cancelled.id });
    const completed = await enqueueOne(shared.clients, { queue });
    await worker.ack(await next());
    const unknown = uuidv7();

    const { result } = await shared.clients.operator.cancelJobs({
      selection: byIds(waiting.id, unknown, scheduled.id, completed.id, 'nope', active.id, cancelled.id),
      reason: 'superseded',
    });
    expect(itemsOf(result)).toEqual([
      { jobId: waiting.id, ok: true, errorCode: '', state: S.JOB_STATE_CANCELLED },
      { jobId: unknown, ok: false, errorCode: 'not_found', state: S.JOB_STATE_UNSPECIFIED },
      { jobId: scheduled.id, ok: true, errorCode: '', state: S.JOB_STATE_CANCELLED },
      { jobId: completed.id, ok: false, errorCode: 'invalid_state', state: S.JOB_STATE_UNSPECIFIED },
      { jobId: 'nope', ok: false, errorCode: 'invalid_request', state: S.JOB_STATE_UNSPECIFIED },
      { jobId: active.id, ok: true, errorCode: '', state: S.JOB_STATE_CANCELLED },
      // Cancelling a cancelled job succeeds, as CancelJob does.
      { jobId: cancelled.id, ok: true, errorCode: '', state: S.JOB_STATE_CANCELLED },
    ]);
    expect(result).toMatchObject({ matched: 7, succeeded: 4, failed: 3, nextPageToken: '' });
    expect(result!.items.filter((i) => !i.ok).every((i) => i.errorMessage !== '')).toBe(true);
    expect(await beat.responses.next()).toMatchObject({ inReplyTo: 0, cancelledJobIds: [active.id] });
    for (const job of [waiting, scheduled, active]) expect(await stateOf(job.id)).toBe(S.JOB_STATE_CANCELLED);
    expect(await stateOf(completed.id)).toBe(S.JOB_STATE_COMPLETED);
  });

  it('retries discarded jobs afresh and retryable ones now, refusing the rest', async () => {
    const queue = newQueue();
    const { worker, next } = await fetchingWorker(queue);
    const discarded = await enqueueOne(shared.clients, { queue, retry: { maxAttempts: 1 } });
    await worker.fail(await next(), { type: 'Boom' });
    const retryable = await enqueueOne(shared.clients, { queue, retry: { maxAttempts: 3 } });
    await worker.fail(await next(), { type: 'Flaky' });
    const available = await enqueueOne(shared.clients, { queue: newQueue() });

    const { result } = await shared.clients.operator.retryJobs({ selection: byIds(discarded.id, retryable.id, available.id) });
    expect(itemsOf(result)).toEqual([
      { jobId: discarded.id, ok: true, errorCode: '', state: S.JOB_STATE_AVAILABLE },
      { jobId: retryable.id, ok: true, errorCode: '', state: S.JOB_STATE_AVAILABLE },
      { jobId: available.id, ok: false, errorCode: 'invalid_state', state: S.JOB_STATE_UNSPECIFIED },
    ]);
    expect(result).toMatchObject({ matched: 3, succeeded: 2, failed: 1 });
    // Delivered at once on the open stream, without waiting for the retryable one's backoff.
    const delivered = new Map<string, Job>();
    while (delivered.size < 2) {
      const delivery = await next();
      delivered.set(delivery.job!.id, delivery.job!);
    }
    expect(delivered.get(discarded.id)).toMatchObject({ attempt: 1, errors: [], error: undefined });
    expect(delivered.get(retryable.id)).toMatchObject({ attempt: 2, errors: [expect.objectContaining({ type: 'Flaky', attempt: 1 })] });
  });

  it('deletes finished jobs and every trace of them, refusing unfinished ones', async () => {
    const queue = newQueue();
    const { worker, next } = await fetchingWorker(queue);
    const completed = await enqueueOne(shared.clients, { queue });
    await worker.ack(await next(), { done: true });
    const discarded = await enqueueOne(shared.clients, { queue, retry: { maxAttempts: 1 } });
    await worker.fail(await next(), { type: 'Boom', code: HandlerCode.HANDLER_CODE_DEAD_LETTER });
    const cancelled = await enqueueOne(shared.clients, { queue });
    await shared.clients.jobs.cancelJob({ jobId: cancelled.id });
    const other = newQueue();
    const [waiting, lonely] = await enqueue(shared.clients, { queue: other }, { queue: other });
    await shared.clients.jobs.cancelJob({ jobId: lonely!.id });

    const { result } = await shared.clients.operator.deleteJobs({
      selection: byIds(completed.id, waiting!.id, discarded.id, cancelled.id, lonely!.id),
    });
    expect(itemsOf(result)).toEqual([
      { jobId: completed.id, ok: true, errorCode: '', state: S.JOB_STATE_UNSPECIFIED },
      { jobId: waiting!.id, ok: false, errorCode: 'invalid_state', state: S.JOB_STATE_UNSPECIFIED },
      { jobId: discarded.id, ok: true, errorCode: '', state: S.JOB_STATE_UNSPECIFIED },
      { jobId: cancelled.id, ok: true, errorCode: '', state: S.JOB_STATE_UNSPECIFIED },
      { jobId: lonely!.id, ok: true, errorCode: '', state: S.JOB_STATE_UNSPECIFIED },
    ]);
    for (const job of [completed, discarded, cancelled, lonely!]) {
      expect(await rpcError(shared.clients.jobs.getJob({ jobId: job.id }))).toMatchObject({ code: Status.NOT_FOUND });
    }
    expect((await listJobIds(shared.clients, { queue })).ids).toEqual([]);
    expect((await listJobIds(shared.clients, { queue: other })).ids).toEqual([waiting!.id]);
    const { queues } = await shared.clients.operator.listQueues({ pageSize: 1_000 });
    expect(queues.find((q) => q.name === other)).toMatchObject({ available: 1, cancelled: 0 });
    // A queue whose last job is deleted is gone.
    expect(queues.find((q) => q.name === queue)).toBeUndefined();
    expect((await shared.clients.operator.getQueueStats({ queue })).queue).toMatchObject({
      name: queue,
      completed: 0,
      cancelled: 0,
      discarded: 0,
    });
    expect(await shared.server.audit()).toEqual([]);
  });

  it('acts on the jobs a filter selects: its states (waiting ones by default for cancel), queue, type and finishing time', async () => {
    const queue = newQueue();
    // It holds one job and takes no more.
    const { next } = await fetchingWorker(queue, 1);
    const held = await enqueueOne(shared.clients, { queue, type: 'mail.send' });
    await next();
    const mails = await enqueue(
      shared.clients,
      { queue, type: 'mail.send' },
      { queue, type: 'mail.send', scheduledAt: new Date(clock.now() + 60_000) },
    );
    const reports = await enqueue(shared.clients, { queue, type: 'report.build' }, { queue: newQueue(), type: 'mail.send' });

    const cancelled = await shared.clients.operator.cancelJobs({ selection: byFilter({ queue, type: 'mail.send' }) });
    expect(cancelled.result).toMatchObject({ matched: 2, succeeded: 2, failed: 0, nextPageToken: '' });
    expect(cancelled.result!.items.map((i) => i.jobId).toSorted()).toEqual(idsOf(mails).toSorted());
    expect(await stateOf(held.id)).toBe(S.JOB_STATE_ACTIVE);
    for (const job of reports) expect(await stateOf(job.id)).toBe(S.JOB_STATE_AVAILABLE);

    const finishedAt = clock.now();
    clock.advance(60_000);
    await shared.clients.jobs.cancelJob({ jobId: reports[0]!.id });
    const deleted = await shared.clients.operator.deleteJobs({ selection: byFilter({ queue, finishedBefore: new Date(finishedAt) }) });
    expect(deleted.result!.items.map((i) => i.jobId).toSorted()).toEqual(idsOf(mails).toSorted());
    expect((await listJobIds(shared.clients, { queue })).ids.toSorted()).toEqual([held.id, reports[0]!.id].toSorted());
  });

  it('retries the dead letter by error type', async () => {
    const queue = newQueue();
    const { worker, next } = await fetchingWorker(queue);
    const jobs: Job[] = [];
    for (const type of ['SmtpError', 'BadInput', 'SmtpError']) {
      jobs.push(await enqueueOne(shared.clients, { queue, retry: { maxAttempts: 1 } }));
      await worker.fail(await next(), { type });
    }
    const { result } = await shared.clients.operator.retryJobs({ selection: byFilter({ queue, errorType: 'SmtpError' }) });
    expect(result!.items.map((i) => [i.jobId, i.state])).toEqual([
      [jobs[0]!.id, S.JOB_STATE_AVAILABLE],
      [jobs[2]!.id, S.JOB_STATE_AVAILABLE],
    ]);
    expect(await stateOf(jobs[1]!.id)).toBe(S.JOB_STATE_DISCARDED);
  });

  it('only counts on a dry run, by ids or by filter, and changes nothing', async () => {
    const queue = newQueue();
    const jobs = await enqueue(shared.clients, { queue }, { queue }, { queue });
    const byIdRun = await shared.clients.operator.cancelJobs({ selection: { ...byIds(...idsOf(jobs)), dryRun: true } });
    expect(byIdRun.result).toEqual({ items: [], matched: 3, succeeded: 3, failed: 0, nextPageToken: '' });
    const byFilterRun = await shared.clients.operator.cancelJobs({ selection: byFilter({ queue }, { dryRun: true }) });
    expect(byFilterRun.result).toEqual({ items: [], matched: 3, succeeded: 3, failed: 0, nextPageToken: '' });
    for (const job of jobs) expect(await stateOf(job.id)).toBe(S.JOB_STATE_AVAILABLE);
  });

  it('continues a filter over more jobs than one call takes, each job once', async () => {
    const queue = newQueue();
    const jobs = await enqueue(shared.clients, ...Array.from({ length: 8 }, () => ({ queue })));
    const counted: number[] = [];
    let pageToken = '';
    do {
      const { result } = await shared.clients.operator.cancelJobs({
        selection: byFilter({ queue }, { dryRun: true, limit: 3, pageToken }),
      });
      counted.push(result!.matched);
      pageToken = result!.nextPageToken;
    } while (pageToken !== '' && counted.length < 10);
    expect(counted.reduce((a, b) => a + b)).toBe(8);

    const changed: string[] = [];
    do {
      const { result } = await shared.clients.operator.cancelJobs({ selection: byFilter({ queue }, { limit: 3, pageToken }) });
      expect(result!.items.length).toBeLessThanOrEqual(3);
      changed.push(...result!.items.filter((i) => i.ok).map((i) => i.jobId));
      pageToken = result!.nextPageToken;
    } while (pageToken !== '' && changed.length <= jobs.length);
    expect(changed).toEqual(idsOf(jobs));
  });

  it('changes at most 1,000 jobs per call by default', async () => {
    const queue = newQueue();
    await enqueue(shared.clients, ...Array.from({ length: 1_000 }, () => ({ queue })));
    const last = await enqueueOne(shared.clients, { queue });
    const first = await shared.clients.operator.cancelJobs({ selection: byFilter({ queue }) });
    expect(first.result).toMatchObject({ matched: 1_000, succeeded: 1_000 });
    expect(first.result!.nextPageToken).not.toBe('');
    const second = await shared.clients.operator.cancelJobs({ selection: byFilter({ queue }, { pageToken: first.result!.nextPageToken }) });
    expect(itemsOf(second.result)).toEqual([{ jobId: last.id, ok: true, errorCode: '', state: S.JOB_STATE_CANCELLED }]);
  });

  it('refuses a selection it cannot take', async () => {
    const cases: [() => Promise<unknown>, string][] = [
      [() => shared.clients.operator.cancelJobs({}), 'selection'],
      [() => shared.clients.operator.cancelJobs({ selection: byIds() }), 'selection.job_ids.ids'],
      [
        () => shared.clients.operator.cancelJobs({ selection: byIds(...Array.from({ length: 1_001 }, () => uuidv7())) }),
        'selection.job_ids.ids',
      ],
      [() => shared.clients.operator.cancelJobs({ selection: byFilter({}, { limit: 1_001 }) }), 'selection.limit'],
      [() => shared.clients.operator.deleteJobs({ selection: byFilter({ states: [S.JOB_STATE_AVAILABLE] }) }), 'selection.filter.states'],
      [() => shared.clients.operator.retryJobs({ selection: byFilter({ queue: 'Bad Queue' }) }), 'selection.filter.queue'],
      [() => shared.clients.operator.retryJobs({ selection: byFilter({}, { pageToken: 'garbage!' }) }), 'selection.page_token'],
    ];
    for (const [call, field] of cases) {
      expect(await rpcError(call)).toMatchObject({ code: Status.INVALID_ARGUMENT, reason: 'invalid_request', fields: [field] });
    }
  });
});
