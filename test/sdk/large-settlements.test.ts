import { JobState, type Job } from '../../gen/ojs/server/v1/job';
import type { Delivery } from '../../gen/ojs/server/v1/worker_service';
import { JobFailure, Worker } from '../../packages/sdk/src';
import { Settlements, type SettlementOutcome } from '../../packages/sdk/src/settlements';
import { enqueue, getJob } from '../support/jobs';
import { RecordingLogger } from '../support/silent-logger';
import { TestServer, type Clients } from '../support/test-server';
import { TestWorker } from '../support/test-worker';
import { eventuallyHolds, within } from '../support/waiting';

/** More than a gRPC server takes in one message by default (4 MiB). */
const OVER_MESSAGE_LIMIT = 5_000_000;
/** More than the server's default result limit (1 MiB), less than one message. */
const OVER_RESULT_LIMIT = 2_000_000;

/**
 * Settlements the server cannot take: acks whose results add up to more
 * than one call may carry go out in smaller calls; a result too large for
 * any call fails its job, and an error report too large is sent again
 * reduced, rather than leaving the job active until its timeout.
 */
describe('SDK settlements too large for the server', () => {
  let server: TestServer;
  let clients: Clients;
  let settlements: Settlements | undefined;
  let worker: Worker | undefined;

  beforeAll(async () => {
    server = await TestServer.start();
    clients = server.connect();
  });
  afterEach(async () => {
    settlements?.close();
    await worker?.stop({ force: true });
    settlements = undefined;
    worker = undefined;
  });
  afterAll(async () => {
    await server.stop();
  });

  /** `count` jobs on `queue`, delivered to a hand-driven worker that holds their leases. */
  const deliveries = async (queue: string, count: number): Promise<{ workerId: string; held: Delivery[] }> => {
    const holder = await TestWorker.register(clients, { queues: [queue], concurrency: count });
    await enqueue(clients, ...Array.from({ length: count }, () => ({ type: 'large.result', queue })));
    const fetch = holder.openFetch();
    const held: Delivery[] = [];
    while (held.length < count) held.push(...(await fetch.next()).deliveries);
    fetch.close();
    return { workerId: holder.workerId, held };
  };

  const ackAll = (held: Delivery[], result: (i: number) => unknown): Promise<SettlementOutcome[]> =>
    within(Promise.all(held.map((d, i) => settlements!.ack(d.job!.id, d.leaseToken, result(i)))), 10_000, 'every ack to be answered');

  it('acknowledges coalesced results that together exceed the server message limit', async () => {
    const { workerId, held } = await deliveries('large-results-many', 20);
    settlements = new Settlements(clients.workers, workerId, new RecordingLogger());
    const outcomes = await ackAll(held, (i) => `${i}:${'x'.repeat(OVER_MESSAGE_LIMIT / 20)}`);
    expect(outcomes).toEqual(held.map(() => ({ ok: true })));
    const stored = await Promise.all(held.map((d) => getJob(clients, d.job!.id)));
    expect(stored.map((job) => job.state)).toEqual(held.map(() => JobState.JOB_STATE_COMPLETED));
    expect(stored.map((job) => String(job.result).split(':')[0])).toEqual(held.map((_, i) => String(i)));
  });

  it('answers result_too_large for a result no call can carry, and sends the others', async () => {
    const { workerId, held } = await deliveries('large-results-one', 2);
    settlements = new Settlements(clients.workers, workerId, new RecordingLogger());
    const outcomes = await ackAll(held, (i) => (i === 0 ? 'x'.repeat(OVER_MESSAGE_LIMIT) : 'small'));
    expect(outcomes.map((outcome) => (outcome.ok ? 'ok' : outcome.code))).toEqual(['result_too_large', 'ok']);
    expect((await getJob(clients, held[0]!.job!.id)).state).toBe(JobState.JOB_STATE_ACTIVE);
    expect((await getJob(clients, held[1]!.job!.id)).state).toBe(JobState.JOB_STATE_COMPLETED);
  });

  it.each([
    ['over the server result limit', OVER_RESULT_LIMIT],
    ['too large for any call', OVER_MESSAGE_LIMIT],
  ])('fails a job whose handler returns a result %s, with error type result_too_large', async (_, resultChars) => {
    const logger = new RecordingLogger();
    worker = new Worker({ address: server.address, queues: ['large-results-worker'], concurrency: 1, logger });
    worker.handle('large.result', async () => 'x'.repeat(resultChars));
    await worker.start();
    const [job] = await enqueue(clients, { type: 'large.result', queue: 'large-results-worker', retry: { maxAttempts: 1 } });
    const failed = await eventuallyHolds(
      () => getJob(clients, job!.id),
      (j: Job) => j.state !== JobState.JOB_STATE_AVAILABLE && j.state !== JobState.JOB_STATE_ACTIVE,
    );
    expect(failed.state).toBe(JobState.JOB_STATE_DISCARDED);
    expect(failed.error?.type).toBe('result_too_large');
    expect(failed.error?.message).toMatch(/larger than the server accepts.*elsewhere/);
    expect(logger.entries.map((e) => e.message)).toContain('the server refused the result as too large; failing the job');
  });

  it('fails a job whose error report is too large for the server with a reduced one, keeping its type and verdict', async () => {
    worker = new Worker({ address: server.address, queues: ['large-errors-worker'], concurrency: 1, logger: new RecordingLogger() });
    worker.handle('large.error', async () => {
      throw new JobFailure('x'.repeat(OVER_MESSAGE_LIMIT), { type: 'report.huge', code: 'discard' });
    });
    await worker.start();
    const [job] = await enqueue(clients, { type: 'large.error', queue: 'large-errors-worker' });
    const failed = await eventuallyHolds(
      () => getJob(clients, job!.id),
      (j: Job) => j.state !== JobState.JOB_STATE_AVAILABLE && j.state !== JobState.JOB_STATE_ACTIVE,
    );
    expect(failed.state).toBe(JobState.JOB_STATE_DISCARDED);
    expect(failed.error?.type).toBe('report.huge');
    expect(failed.error?.message).toMatch(/^x{1000} \(the server refused the full error report: /);
  });
});
