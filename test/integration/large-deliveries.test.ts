import { randomUUID } from 'node:crypto';
import { Status } from 'nice-grpc';
import { JobState } from '../../gen/ojs/server/v1/job';
import { FetchResponse, type Delivery } from '../../gen/ojs/server/v1/worker_service';
import { varintBytes } from '../../src/domain/json';
import { CLIENT_MESSAGE_LIMIT_BYTES, DELIVERY_BUDGET_BYTES, JOB_GROWTH_MAX_BYTES } from '../../src/domain/limits';
import { enqueueOne, getJob } from '../support/jobs';
import { ManualClock } from '../support/manual-clock';
import { rpcError } from '../support/rpc-error';
import type { StreamReader } from '../support/streams';
import { shareServer } from '../support/shared-server';
import { TestWorker } from '../support/test-worker';
import { within } from '../support/waiting';

/**
 * Findings 4 and 5 of issue 8: Fetch packed deliveries into messages no
 * default client could receive (two 3 MB jobs in one 6.3 MB message), one
 * claim could take unbounded bytes from Redis, and errors stored uncapped
 * grew jobs past any message. Here jobs are as large as the limits allow
 * (args up to what still fits one message with the largest error history a
 * job can gather), and every client is a default one: it refuses messages
 * over 4 MiB.
 */

/** The largest job the server may be configured for: with its largest growth it still fits one Fetch message. */
const MAX_JOB_BYTES = DELIVERY_BUDGET_BYTES - JOB_GROWTH_MAX_BYTES;
/** An ASCII string argument that measures `bytes`: as a google.protobuf.Value (the larger encoding), a tag, a length and the characters. */
const argOfBytes = (bytes: number): string => 'x'.repeat(bytes - 1 - varintBytes(bytes));

describe('large jobs and a default client', () => {
  const clock = new ManualClock();
  const shared = shareServer({
    clock,
    protocol: { heartbeatTimeoutMs: 3_600_000 },
    limits: { maxJobBytes: MAX_JOB_BYTES, maxResultBytes: 0 },
  });

  const newQueue = (): string => `big-${randomUUID().slice(0, 8)}`;

  /** A registered worker's Fetch stream; its messages must each fit a default client. */
  async function fetching(queue: string, concurrency: number): Promise<{ worker: TestWorker; fetch: StreamReader<FetchResponse> }> {
    const worker = await TestWorker.register(shared.clients, { queues: [queue], concurrency });
    const fetch = worker.openFetch();
    shared.closeAfterTest(fetch);
    return { worker, fetch };
  }

  /** The next message with deliveries, checked to fit a default client's limit. */
  async function nextDeliveries(fetch: StreamReader<FetchResponse>): Promise<Delivery[]> {
    const message = await within(
      fetch.nextMatching((m) => m.deliveries.length > 0),
      10_000,
      'a message with deliveries',
    );
    expect(FetchResponse.encode(message).finish().length).toBeLessThanOrEqual(CLIENT_MESSAGE_LIMIT_BYTES);
    return message.deliveries;
  }

  it('delivers many large jobs to one worker of concurrency 500 in several messages a default client takes, each job once (finding 4)', async () => {
    const queue = newQueue();
    const ids = new Set<string>();
    for (let i = 0; i < 12; i++) ids.add((await enqueueOne(shared.clients, { queue, args: [argOfBytes(1_200_000)] })).id);
    const { worker, fetch } = await fetching(queue, 500);
    const delivered: Delivery[] = [];
    let messages = 0;
    while (delivered.length < ids.size) {
      delivered.push(...(await nextDeliveries(fetch)));
      messages += 1;
    }
    expect(delivered.map((d) => d.job!.id).toSorted()).toEqual([...ids].toSorted());
    // At most three of 1.2 MB fit a message.
    expect(messages).toBeGreaterThanOrEqual(4);
    const completions = delivered.map((d) => ({ jobId: d.job!.id, leaseToken: d.leaseToken, result: undefined }));
    const { results } = await shared.clients.workers.ackBatch({ workerId: worker.workerId, completions });
    expect(results.map((r) => r.ok)).toEqual(completions.map(() => true));
  });

  it('sends two jobs of 2.5 MB in separate messages (finding 5)', async () => {
    const queue = newQueue();
    const jobs = [
      await enqueueOne(shared.clients, { queue, args: [argOfBytes(2_500_000)] }),
      await enqueueOne(shared.clients, { queue, args: [argOfBytes(2_500_000)] }),
    ];
    const { fetch } = await fetching(queue, 2);
    const first = await nextDeliveries(fetch);
    const second = await nextDeliveries(fetch);
    expect([first.length, second.length]).toEqual([1, 1]);
    expect([first[0]!.job!.id, second[0]!.job!.id].toSorted()).toEqual(jobs.map((j) => j.id).toSorted());
  });

  it('refuses an error type over 255 characters and details over 4 KiB, and the job stays active (finding 5)', async () => {
    const queue = newQueue();
    const job = await enqueueOne(shared.clients, { queue });
    const { worker, fetch } = await fetching(queue, 1);
    const [delivery] = await nextDeliveries(fetch);
    const fail = (error: { type: string; details?: Record<string, unknown> }) =>
      shared.clients.workers.fail({ workerId: worker.workerId, jobId: job.id, leaseToken: delivery!.leaseToken, error });
    expect(await rpcError(fail({ type: 'T'.repeat(256) }))).toMatchObject({ code: Status.INVALID_ARGUMENT, fields: ['error.type'] });
    expect(await rpcError(fail({ type: 'Timeout', details: { blob: 'd'.repeat(5_000) } }))).toMatchObject({
      code: Status.INVALID_ARGUMENT,
      fields: ['error.details'],
    });
    expect((await getJob(shared.clients, job.id)).state).toBe(JobState.JOB_STATE_ACTIVE);
  });

  it('keeps a job of the largest size deliverable through twenty-one failures with the largest errors (finding 5)', async () => {
    const queue = newQueue();
    const retry = { maxAttempts: 25, initialInterval: 'PT0.001S', maxInterval: 'PT0.001S', jitter: false };
    const job = await enqueueOne(shared.clients, { queue, args: [argOfBytes(MAX_JOB_BYTES)], retry });
    const { worker, fetch } = await fetching(queue, 1);
    const largestError = {
      type: 'T'.repeat(255),
      message: 'm'.repeat(10_000),
      backtrace: Array.from({ length: 50 }, () => 'b'.repeat(200)),
      details: { blob: 'd'.repeat(4_000) },
    };
    for (let attempt = 1; attempt <= 21; attempt++) {
      const [delivery] = await nextDeliveries(fetch);
      expect(delivery!.job).toMatchObject({ id: job.id, attempt });
      await shared.clients.workers.fail({
        workerId: worker.workerId,
        jobId: job.id,
        leaseToken: delivery!.leaseToken,
        error: largestError,
      });
      clock.advance(10);
      await shared.server.runMaintenance();
    }
    const [last] = await nextDeliveries(fetch);
    expect(last!.job!.errors).toHaveLength(20);
    expect(last!.job!.attempt).toBe(22);
    // GetJob answers it to a default client too.
    expect((await getJob(shared.clients, job.id)).attempt).toBe(22);
  });
});
