import { uuidv7 } from 'uuidv7';
import { randomUUID } from 'node:crypto';
import { Metadata, Status } from 'nice-grpc';
import { HandlerCode, JobState, OnExhaustion, type DeepPartial, type Job } from '../../gen/ojs/server/v1/job';
import type { Delivery, FetchResponse } from '../../gen/ojs/server/v1/worker_service';
import { enqueueOne, getJob } from '../support/jobs';
import { ManualClock } from '../support/manual-clock';
import { rpcError } from '../support/rpc-error';
import type { StreamReader } from '../support/streams';
import { shareServer } from '../support/shared-server';
import { TestWorker } from '../support/test-worker';

const hasDeliveries = (m: FetchResponse): boolean => m.deliveries.length > 0;
const S = JobState;

describe('the job lifecycle', () => {
  const clock = new ManualClock();
  const shared = shareServer({ clock, protocol: { heartbeatTimeoutMs: 3_600_000 } });

  async function workerFor(job: DeepPartial<Job> = {}) {
    const queue = `q-${randomUUID().slice(0, 8)}`;
    const worker = await TestWorker.register(shared.clients, { queues: [queue] });
    const fetch = worker.openFetch();
    shared.closeAfterTest(fetch);
    const stored = await enqueueOne(shared.clients, { queue, ...job });
    return { worker, fetch, job: stored, queue };
  }

  async function nextDelivery(fetch: StreamReader<FetchResponse>): Promise<Delivery> {
    return (await fetch.nextMatching(hasDeliveries)).deliveries[0]!;
  }

  it('retries a failing job with exponential backoff and discards it after max_attempts', async () => {
    const { worker, fetch, job } = await workerFor();
    const delays: number[] = [];
    for (let attempt = 1; attempt <= 2; attempt++) {
      const delivery = await nextDelivery(fetch);
      expect(delivery.job!.attempt).toBe(attempt);
      const reply = await worker.fail(delivery, { type: 'SmtpError', message: `try ${attempt}` });
      expect(reply.state).toBe(S.JOB_STATE_RETRYABLE);
      const delay = reply.nextRetryAt!.getTime() - clock.now();
      delays.push(delay);
      clock.advance(delay - 1);
      await shared.server.runMaintenance();
      expect((await getJob(shared.clients, job.id)).state).toBe(S.JOB_STATE_RETRYABLE);
      clock.advance(1);
      await shared.server.runMaintenance();
    }
    const lastDelivery = await nextDelivery(fetch);
    expect(lastDelivery.job!.attempt).toBe(3);
    const lastReply = await worker.fail(lastDelivery, { type: 'SmtpError', message: 'try 3' });
    expect(lastReply.state).toBe(S.JOB_STATE_DISCARDED);
    expect(delays).toEqual([1_000, 2_000]);
    const final = await getJob(shared.clients, job.id);
    expect(final).toMatchObject({
      state: S.JOB_STATE_DISCARDED,
      attempt: 3,
      error: { type: 'SmtpError', message: 'try 3', attempt: 3 },
      deadLetter: false,
    });
    expect(final.errors.map((e) => e.attempt)).toEqual([1, 2, 3]);
    expect(final.completedAt).toEqual(new Date(clock.now()));
  });

  it('discards at once on a non-retryable error type, dead-lettering when the policy says so', async () => {
    const { worker, fetch, job } = await workerFor({
      retry: { nonRetryableErrors: ['validation.*'], onExhaustion: OnExhaustion.ON_EXHAUSTION_DEAD_LETTER },
    });
    const reply = await worker.fail(await nextDelivery(fetch), { type: 'validation.bad_email' });
    expect(reply.state).toBe(S.JOB_STATE_DISCARDED);
    expect(await getJob(shared.clients, job.id)).toMatchObject({ attempt: 1, deadLetter: true });
  });

  it.each([
    [HandlerCode.HANDLER_CODE_DISCARD, false],
    [HandlerCode.HANDLER_CODE_FAIL, false],
    [HandlerCode.HANDLER_CODE_DEAD_LETTER, true],
  ])('lets the handler code %i end the job whatever attempts remain', async (code, deadLetter) => {
    const { worker, fetch, job } = await workerFor();
    await worker.fail(await nextDelivery(fetch), { type: 'Whatever', code });
    expect(await getJob(shared.clients, job.id)).toMatchObject({ state: S.JOB_STATE_DISCARDED, deadLetter, error: { code } });
  });

  it('stores a structured error with its backtrace capped', async () => {
    const { worker, fetch, job } = await workerFor();
    const delivery = await nextDelivery(fetch);
    await shared.clients.workers.fail({
      workerId: worker.workerId,
      jobId: delivery.job!.id,
      leaseToken: delivery.leaseToken,
      error: {
        type: 'TypeError',
        message: 'x is undefined',
        backtrace: Array.from({ length: 70 }, (_, i) => `at frame${i} (file.js:${i}:1)`),
        code: HandlerCode.HANDLER_CODE_UNSPECIFIED,
        details: { input: 'abc' },
        attempt: 99,
        occurredAt: undefined,
      },
    });
    const { error } = await getJob(shared.clients, job.id);
    expect(error).toMatchObject({ type: 'TypeError', message: 'x is undefined', attempt: 1, details: { input: 'abc' } });
    expect(error!.backtrace).toHaveLength(50);
    expect(error!.occurredAt).toEqual(new Date(clock.now()));
  });

  it('requires an error type on Fail', async () => {
    const { worker, fetch } = await workerFor();
    expect(await rpcError(worker.fail(await nextDelivery(fetch), { type: '' }))).toMatchObject({
      code: Status.INVALID_ARGUMENT,
      fields: ['error.type'],
    });
  });

  it('revives a discarded job with RetryJob, resetting attempts and errors', async () => {
    const { worker, fetch, job } = await workerFor({ retry: { maxAttempts: 1 } });
    await worker.fail(await nextDelivery(fetch), { type: 'Boom' });
    const { job: revived } = await shared.clients.jobs.retryJob({ jobId: job.id });
    expect(revived).toMatchObject({ state: S.JOB_STATE_AVAILABLE, attempt: 0, errors: [] });
    expect((await nextDelivery(fetch)).job).toMatchObject({ id: job.id, attempt: 1 });
  });

  it('makes a scheduled job available when its time comes', async () => {
    const queue = `q-${randomUUID().slice(0, 8)}`;
    const job = await enqueueOne(shared.clients, { queue, scheduledAt: new Date(clock.now() + 60_000) });
    clock.advance(59_999);
    await shared.server.runMaintenance();
    expect((await getJob(shared.clients, job.id)).state).toBe(S.JOB_STATE_SCHEDULED);
    clock.advance(1);
    await shared.server.runMaintenance();
    expect(await getJob(shared.clients, job.id)).toMatchObject({ state: S.JOB_STATE_AVAILABLE, enqueuedAt: new Date(clock.now()) });
  });

  it('discards a job whose expires_at passes before it starts, and never delivers it', async () => {
    const queue = `q-${randomUUID().slice(0, 8)}`;
    const job = await enqueueOne(shared.clients, { queue, expiresAt: new Date(clock.now() + 10_000) });
    clock.advance(10_000);
    await shared.server.runMaintenance();
    expect(await getJob(shared.clients, job.id)).toMatchObject({ state: S.JOB_STATE_DISCARDED, error: { type: 'expired' } });
  });

  it('activates pending jobs only', async () => {
    const { jobs } = await shared.clients.jobs.enqueue({ jobs: [{ type: 'test.job', args: [] }], pending: true });
    const pending = jobs[0]!;
    expect((await shared.clients.jobs.activateJob({ jobId: pending.id })).job!.state).toBe(S.JOB_STATE_AVAILABLE);
    expect(await rpcError(shared.clients.jobs.activateJob({ jobId: pending.id }))).toMatchObject({
      code: Status.FAILED_PRECONDITION,
      reason: 'invalid_state',
      metadata: { from_state: 'available', to_state: 'available' },
    });
  });

  it('cancels unfinished jobs, idempotently, and keeps terminal states permanent', async () => {
    const waiting = await enqueueOne(shared.clients, { queue: `q-${randomUUID().slice(0, 8)}` });
    expect((await shared.clients.jobs.cancelJob({ jobId: waiting.id })).job!.state).toBe(S.JOB_STATE_CANCELLED);
    expect((await shared.clients.jobs.cancelJob({ jobId: waiting.id })).job!.state).toBe(S.JOB_STATE_CANCELLED);
    expect(await rpcError(shared.clients.jobs.retryJob({ jobId: waiting.id }))).toMatchObject({ code: Status.FAILED_PRECONDITION });
    expect(await rpcError(shared.clients.jobs.activateJob({ jobId: waiting.id }))).toMatchObject({ code: Status.FAILED_PRECONDITION });

    const { worker, fetch, job } = await workerFor();
    const delivery = await nextDelivery(fetch);
    await worker.ack(delivery);
    for (const call of [
      shared.clients.jobs.cancelJob({ jobId: job.id }),
      shared.clients.jobs.retryJob({ jobId: job.id }),
      worker.ack(delivery),
    ]) {
      expect(await rpcError(call)).toMatchObject({ code: Status.FAILED_PRECONDITION, reason: 'invalid_state' });
    }
    expect((await getJob(shared.clients, job.id)).state).toBe(S.JOB_STATE_COMPLETED);
  });

  it('answers NOT_FOUND for unknown jobs and INVALID_ARGUMENT for an id that cannot be one', async () => {
    const unknown = uuidv7();
    for (const call of [
      shared.clients.jobs.getJob({ jobId: unknown }),
      shared.clients.jobs.cancelJob({ jobId: unknown }),
      shared.clients.jobs.activateJob({ jobId: unknown }),
      shared.clients.jobs.retryJob({ jobId: unknown }),
    ]) {
      expect(await rpcError(call)).toMatchObject({ code: Status.NOT_FOUND, reason: 'not_found', metadata: { job_id: unknown } });
    }
    for (const jobId of ['', 'nope', unknown.toUpperCase()]) {
      expect(await rpcError(shared.clients.jobs.getJob({ jobId }))).toMatchObject({ code: Status.INVALID_ARGUMENT, fields: ['job_id'] });
    }
  });

  it('answers settlements with the request id and the server version, whether it takes them or refuses them', async () => {
    const { worker, fetch } = await workerFor();
    const delivery = await nextDelivery(fetch);
    const headers: Metadata[] = [];
    const asking = (id: string) => ({ metadata: Metadata({ 'x-ojs-request-id': id }), onHeader: (h: Metadata) => headers.push(h) });
    const settlement = { workerId: worker.workerId, jobId: delivery.job!.id, leaseToken: delivery.leaseToken };
    await shared.clients.workers.ack(settlement, asking('ack-1'));
    expect((await rpcError(shared.clients.workers.ack(settlement, asking('ack-2')))).code).toBe(Status.FAILED_PRECONDITION);
    const failure = { ...settlement, error: { type: 'E', message: 'late' } };
    expect((await rpcError(shared.clients.workers.fail(failure, asking('fail-1')))).code).toBe(Status.FAILED_PRECONDITION);
    const batch = { workerId: worker.workerId, completions: [{ jobId: delivery.job!.id, leaseToken: delivery.leaseToken }] };
    expect((await shared.clients.workers.ackBatch(batch, asking('batch-1'))).results[0]!.ok).toBe(false);
    expect(headers.map((h) => [h.get('x-ojs-request-id'), h.get('x-ojs-server-version')])).toEqual(
      ['ack-1', 'ack-2', 'fail-1', 'batch-1'].map((id) => [id, 'test']),
    );
  });
});
