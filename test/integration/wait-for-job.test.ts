import { randomUUID } from 'node:crypto';
import { Status } from 'nice-grpc';
import { uuidv7 } from 'uuidv7';
import { HandlerCode, JobState } from '../../gen/ojs/server/v1/job';
import type { WaitForJobResponse } from '../../gen/ojs/server/v1/job_service';
import type { Delivery, FetchResponse } from '../../gen/ojs/server/v1/worker_service';
import { enqueueOne } from '../support/jobs';
import { rpcError } from '../support/rpc-error';
import { shareServer } from '../support/shared-server';
import { TestWorker } from '../support/test-worker';
import { eventually, within } from '../support/waiting';

const S = JobState;
const hasDeliveries = (m: FetchResponse): boolean => m.deliveries.length > 0;
const newQueue = (): string => `q-${randomUUID().slice(0, 8)}`;
const ms = (value: number) => ({ seconds: Math.floor(value / 1000), nanos: (value % 1000) * 1e6 });

/**
 * WaitForJob (ojs-results 8.2): answers when the job finishes, with its
 * result or last error, or at its deadline with the job as it is.
 */
describe('WaitForJob', () => {
  const shared = shareServer();

  /** A job of its own queue held by a worker. */
  async function heldJob(job: { retry?: { maxAttempts: number } } = {}): Promise<{ worker: TestWorker; delivery: Delivery }> {
    const queue = newQueue();
    const worker = await TestWorker.register(shared.clients, { queues: [queue] });
    const fetch = worker.openFetch();
    shared.closeAfterTest(fetch);
    await enqueueOne(shared.clients, { queue, ...job });
    return { worker, delivery: (await fetch.nextMatching(hasDeliveries)).deliveries[0]! };
  }

  /**
   * A wait in progress: resolves once the server has read the job and waits
   * for it to finish (white-box: no RPC tells), so that what the test does
   * next wakes the waiter rather than being seen by its first read. Its
   * deadline is long: an answer within the test comes from the job finishing.
   */
  async function waitFor(jobId: string): Promise<{ answer: Promise<WaitForJobResponse> }> {
    const waits = (shared.server.server.app.results as unknown as { waiting: ReadonlySet<unknown> }).waiting;
    const before = waits.size;
    const answer = within(shared.clients.jobs.waitForJob({ jobId, maxWait: ms(30_000) }), 10_000, `WaitForJob(${jobId}) to answer`);
    answer.catch(() => {}); // Surfaced where the test awaits it.
    await eventually(
      async () => (waits.size > before ? true : undefined),
      () => `the server to wait for ${jobId}`,
      { intervalMs: 5 },
    );
    return { answer };
  }

  it('answers with the result when the job completes while it waits', async () => {
    const { worker, delivery } = await heldJob();
    const jobId = delivery.job!.id;
    // A first wait ends at its deadline: the job is still running, and the waiter is told so.
    expect(await shared.clients.jobs.waitForJob({ jobId, maxWait: ms(50) })).toMatchObject({
      finished: false,
      job: { id: jobId, state: S.JOB_STATE_ACTIVE },
    });
    const waiting = await waitFor(jobId);
    await worker.ack(delivery, { sent: 3 });
    expect(await waiting.answer).toMatchObject({ finished: true, job: { id: jobId, state: S.JOB_STATE_COMPLETED, result: { sent: 3 } } });
  });

  it('answers with the last error when the job is discarded', async () => {
    const { worker, delivery } = await heldJob();
    const waiting = await waitFor(delivery.job!.id);
    await worker.fail(delivery, { type: 'BadInput', message: 'no such user', code: HandlerCode.HANDLER_CODE_DISCARD });
    expect(await waiting.answer).toMatchObject({
      finished: true,
      job: { state: S.JOB_STATE_DISCARDED, error: { type: 'BadInput', message: 'no such user', attempt: 1 } },
    });
  });

  it('goes on waiting through a failed attempt that will be retried', async () => {
    const { worker, delivery } = await heldJob({ retry: { maxAttempts: 3 } });
    const waiting = shared.clients.jobs.waitForJob({ jobId: delivery.job!.id, maxWait: ms(300) });
    await worker.fail(delivery, { type: 'Flaky' });
    expect(await waiting).toMatchObject({ finished: false, job: { state: S.JOB_STATE_RETRYABLE, error: { type: 'Flaky' } } });
  });

  it('answers when the job is cancelled', async () => {
    const job = await enqueueOne(shared.clients, { queue: newQueue() });
    const waiting = await waitFor(job.id);
    await shared.clients.jobs.cancelJob({ jobId: job.id });
    expect(await waiting.answer).toMatchObject({ finished: true, job: { id: job.id, state: S.JOB_STATE_CANCELLED } });
  });

  it('answers at once for a job that has already finished, however long it may wait', async () => {
    const job = await enqueueOne(shared.clients, { queue: newQueue() });
    await shared.clients.jobs.cancelJob({ jobId: job.id });
    const answer = await within(shared.clients.jobs.waitForJob({ jobId: job.id, maxWait: ms(3_600_000) }), 5_000, 'the answer');
    expect(answer).toMatchObject({ finished: true, job: { state: S.JOB_STATE_CANCELLED } });
  });

  it('answers at its deadline with the job as it is', async () => {
    const job = await enqueueOne(shared.clients, { queue: newQueue() });
    const startedAt = Date.now();
    expect(await shared.clients.jobs.waitForJob({ jobId: job.id, maxWait: ms(200) })).toMatchObject({
      finished: false,
      job: { id: job.id, state: S.JOB_STATE_AVAILABLE },
    });
    expect(Date.now() - startedAt).toBeGreaterThanOrEqual(190);
  });

  it('refuses an unknown job, an id that cannot be one, and a wait over an hour', async () => {
    const unknown = uuidv7();
    expect(await rpcError(shared.clients.jobs.waitForJob({ jobId: unknown }))).toMatchObject({
      code: Status.NOT_FOUND,
      reason: 'not_found',
      metadata: { job_id: unknown },
    });
    expect(await rpcError(shared.clients.jobs.waitForJob({ jobId: 'nope' }))).toMatchObject({
      code: Status.INVALID_ARGUMENT,
      fields: ['job_id'],
    });
    const job = await enqueueOne(shared.clients, { queue: newQueue() });
    for (const maxWait of [ms(3_600_001), { seconds: -1, nanos: 0 }]) {
      expect(await rpcError(shared.clients.jobs.waitForJob({ jobId: job.id, maxWait }))).toMatchObject({
        code: Status.INVALID_ARGUMENT,
        fields: ['max_wait'],
      });
    }
  });
});
