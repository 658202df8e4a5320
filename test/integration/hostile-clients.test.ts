import { randomUUID } from 'node:crypto';
import { Status } from 'nice-grpc';
import { uuidv7 } from 'uuidv7';
import { Job, JobError, JobState, type DeepPartial } from '../../gen/ojs/server/v1/job';
import { JobServiceDefinition } from '../../gen/ojs/server/v1/job_service';
import { OperatorServiceDefinition, type QueueInfo } from '../../gen/ojs/server/v1/operator_service';
import {
  BeatRequest,
  Failure,
  FetchRequest,
  RegisterRequest,
  WorkerServiceDefinition,
  WorkerState,
  type Delivery,
} from '../../gen/ojs/server/v1/worker_service';
import { encodedClient } from '../support/encoded-requests';
import { enqueue, enqueueOne, getJob } from '../support/jobs';
import { ManualClock } from '../support/manual-clock';
import {
  concatBytes,
  enqueueRequestBytes,
  invalidUtf8,
  lengthDelimited,
  nestedListValueBytes,
  withSecondsNanos,
} from '../support/raw-protobuf';
import { rpcError } from '../support/rpc-error';
import type { StreamReader } from '../support/streams';
import { TestServer, type Clients } from '../support/test-server';
import { TestWorker } from '../support/test-worker';
import { within } from '../support/waiting';

/**
 * One regression test per finding of issue 8's black-box probe, on both
 * stores: what a hostile client sent then, answered now. (Finding 3, the
 * memory store's bound, is memory-bound.test.ts; finding 7, a stuck Redis,
 * is test/replicas/redis-stuck.test.ts; findings 4 and 5 need larger job
 * limits: large-deliveries.test.ts.) The clock stands still unless a test
 * moves it; workers live an hour without beating.
 */
describe('hostile clients', () => {
  const clock = new ManualClock();
  let server: TestServer;
  let clients: Clients;
  let raw: {
    jobs: ReturnType<typeof encodedClient<typeof JobServiceDefinition>>;
    workers: ReturnType<typeof encodedClient<typeof WorkerServiceDefinition>>;
    operator: ReturnType<typeof encodedClient<typeof OperatorServiceDefinition>>;
  };
  const streams: { close(): void }[] = [];

  beforeAll(async () => {
    server = await TestServer.start({
      clock,
      protocol: { heartbeatTimeoutMs: 3_600_000 },
      retention: { completedMs: 1_000, cancelledMs: 1_000, discardedMs: 1_000, maxJobs: 0 },
    });
    clients = server.connect();
    raw = {
      jobs: encodedClient(JobServiceDefinition, clients.channel),
      workers: encodedClient(WorkerServiceDefinition, clients.channel),
      operator: encodedClient(OperatorServiceDefinition, clients.channel),
    };
  });
  afterEach(() => {
    for (const stream of streams.splice(0)) stream.close();
  });
  afterAll(() => server.stop());

  const newQueue = (): string => `h-${randomUUID().slice(0, 8)}`;
  const job = (fields: DeepPartial<Job> = {}): Uint8Array => Job.encode(Job.fromPartial({ type: 'hostile.job', ...fields })).finish();
  /** A bound on calls that must answer at once: a hang fails the test instead of stalling it. */
  const promptly = () => ({ signal: AbortSignal.timeout(3_000) });

  async function counts(queue: string): Promise<QueueInfo | undefined> {
    return (await clients.operator.listQueues({ pageSize: 1_000 })).queues.find((q) => q.name === queue);
  }

  /** A worker on `queue` holding the `n` jobs just enqueued there. */
  async function holding(queue: string, n: number): Promise<{ worker: TestWorker; deliveries: Delivery[] }> {
    const worker = await TestWorker.register(clients, { queues: [queue], concurrency: Math.max(n, 1) });
    const fetch = worker.openFetch();
    streams.push(fetch);
    return { worker, deliveries: await deliveries(fetch, n) };
  }

  describe('finding 1: one bad timestamp among healthy items', () => {
    it('refuses the whole Enqueue and stores none of its healthy jobs', async () => {
      const queue = newQueue();
      const ids = [uuidv7(), uuidv7(), uuidv7(), uuidv7()];
      const healthy = ids.slice(0, 3).map((id) => job({ id, queue }));
      const poisoned = withSecondsNanos(job({ id: ids[3]!, queue }), 10, { seconds: 10n ** 13n, nanos: 0 });
      const refused = await rpcError(raw.jobs.enqueue(enqueueRequestBytes([...healthy, poisoned])));
      expect(refused).toMatchObject({ code: Status.INVALID_ARGUMENT, fields: ['jobs[3].expires_at'] });
      for (const id of ids) expect((await rpcError(getJob(clients, id))).code).toBe(Status.NOT_FOUND);
      expect(await counts(queue)).toBeUndefined();
    });

    it('settles the healthy items of a FailBatch with one bad item, and lets the worker leave', async () => {
      const queue = newQueue();
      await enqueue(clients, ...Array.from({ length: 4 }, () => ({ queue, retry: { maxAttempts: 3 } })));
      const { worker, deliveries: held } = await holding(queue, 4);
      // A client's error.occurred_at is ignored (the server records when), whatever its value; a type of 256 characters is refused.
      const failure = (delivery: Delivery, type: string, occurredAt?: bigint): Uint8Array => {
        let error: Uint8Array = JobError.encode(JobError.fromPartial({ type, message: 'failed' })).finish();
        if (occurredAt !== undefined) error = withSecondsNanos(error, 7, { seconds: occurredAt, nanos: 0 });
        return concatBytes(
          Failure.encode({ jobId: delivery.job!.id, leaseToken: delivery.leaseToken, error: undefined }).finish(),
          lengthDelimited(3, error),
        );
      };
      const items = [
        failure(held[0]!, 'Timeout', 10n ** 13n),
        failure(held[1]!, 'Timeout'),
        failure(held[2]!, 'Timeout', -1n),
        failure(held[3]!, 'T'.repeat(256)),
      ];
      const request = concatBytes(lengthDelimited(1, Buffer.from(worker.workerId)), ...items.map((item) => lengthDelimited(2, item)));
      const { results } = await raw.workers.failBatch(request);
      expect(results.map((r) => [r.ok, r.errorCode, r.state])).toEqual([
        [true, '', JobState.JOB_STATE_RETRYABLE],
        [true, '', JobState.JOB_STATE_RETRYABLE],
        [true, '', JobState.JOB_STATE_RETRYABLE],
        [false, 'invalid_request', JobState.JOB_STATE_UNSPECIFIED],
      ]);
      expect(await counts(queue)).toMatchObject({ retryable: 3, active: 1, available: 0 });

      // The worker leaves at once, its last job back in the queue.
      expect((await clients.workers.deregister({ workerId: worker.workerId }, promptly())).releasedJobIds).toEqual([held[3]!.job!.id]);
      expect(await counts(queue)).toMatchObject({ retryable: 3, active: 0, available: 1 });
      expect((await clients.operator.listWorkers({})).workers.map((w) => w.workerId)).not.toContain(worker.workerId);
      expect(await server.audit()).toEqual([]);
    });
  });

  describe('finding 2: values that could be stored but never sent', () => {
    it('refuses timestamps before 1970 or after 9999 and retry intervals over a year, naming each field', async () => {
      const envelopes = [
        withSecondsNanos(job(), 9, { seconds: -1n, nanos: 0 }),
        withSecondsNanos(job(), 10, { seconds: 253_402_300_800n, nanos: 0 }),
        job({ retry: { initialInterval: 'P999999999D', maxInterval: 'P366D' } }),
      ];
      const refused = await rpcError(raw.jobs.enqueue(enqueueRequestBytes(envelopes)));
      expect(refused).toMatchObject({ code: Status.INVALID_ARGUMENT, reason: 'invalid_payload' });
      expect(refused.fields.toSorted()).toEqual([
        'jobs[0].scheduled_at',
        'jobs[1].expires_at',
        'jobs[2].retry.initial_interval',
        'jobs[2].retry.max_interval',
      ]);
    });

    it('refuses a worker whose started_at is out of range, so that ListWorkers keeps answering', async () => {
      for (const seconds of [253_402_300_800n, 10n ** 13n, -1n]) {
        const workerId = `w-${randomUUID()}`;
        const register = withSecondsNanos(
          RegisterRequest.encode(RegisterRequest.fromPartial({ workerId, queues: ['default'] })).finish(),
          7,
          { seconds, nanos: 0 },
        );
        expect(await rpcError(raw.workers.register(register))).toMatchObject({ code: Status.INVALID_ARGUMENT, fields: ['started_at'] });
        expect((await clients.operator.listWorkers({ pageSize: 1_000 })).workers.map((w) => w.workerId)).not.toContain(workerId);
      }
    });
  });

  describe('finding 6: unbounded queues', () => {
    it('pages ListQueues in name order, and forgets a queue whose last job is pruned', async () => {
      const prefix = `p-${randomUUID().slice(0, 8)}`;
      const queues = [0, 1, 2, 3, 4].map((i) => `${prefix}-${i}`);
      const jobs = await enqueue(clients, ...queues.map((queue) => ({ queue })));
      const listed = async (): Promise<string[]> => {
        const names: string[] = [];
        let pageToken = '';
        for (let page = 0; page < 1_000; page++) {
          const answer = await clients.operator.listQueues({ pageSize: 2, pageToken });
          expect(answer.queues.length).toBeLessThanOrEqual(2);
          names.push(...answer.queues.map((q) => q.name));
          pageToken = answer.nextPageToken;
          if (pageToken === '') return names;
        }
        throw new Error('ListQueues never gave its last page');
      };
      const all = await listed();
      expect(all).toEqual(all.toSorted());
      expect(all.filter((name) => name.startsWith(prefix))).toEqual(queues);

      await clients.jobs.cancelJob({ jobId: jobs[0]!.id });
      clock.advance(1_001);
      await server.runMaintenance();
      expect((await listed()).filter((name) => name.startsWith(prefix))).toEqual(queues.slice(1));
      expect(await rpcError(clients.operator.listQueues({ pageSize: 1_001 }))).toMatchObject({
        code: Status.INVALID_ARGUMENT,
        fields: ['page_size'],
      });
    });

    it('answers ListWorkers in pages a default client can receive, however large its workers', async () => {
      // The largest workers there may be: 100 queues and 32 labels of 128 characters, about 17 KB each.
      const queues = Array.from({ length: 100 }, (_, i) => `${i}`.padEnd(128, 'q'));
      const labels = Array.from({ length: 32 }, (_, i) => `${i}`.padEnd(128, 'l'));
      const ids = Array.from({ length: 330 }, () => `big-${randomUUID()}`);
      try {
        for (const workerId of ids) await clients.workers.register({ workerId, queues, concurrency: 1, labels });
        const listed: string[] = [];
        let pageToken = '';
        for (let page = 0; page < 1_000; page++) {
          const answer = await clients.operator.listWorkers({ pageSize: 1_000, pageToken });
          listed.push(...answer.workers.map((w) => w.workerId));
          pageToken = answer.nextPageToken;
          if (pageToken === '') break;
        }
        expect(listed).toEqual(expect.arrayContaining(ids));
      } finally {
        for (const workerId of ids) await clients.workers.deregister({ workerId }).catch(() => {});
      }
    });
  });

  describe('finding 8: large batches', () => {
    it('refuses an Enqueue of more than 1,000 jobs and takes one of 1,000', async () => {
      const queue = newQueue();
      const jobs = (n: number) => enqueueRequestBytes(Array.from({ length: n }, () => job({ queue })));
      expect(await rpcError(raw.jobs.enqueue(jobs(1_001)))).toMatchObject({ code: Status.INVALID_ARGUMENT, fields: ['jobs'] });
      expect((await raw.jobs.enqueue(jobs(1_000))).jobs).toHaveLength(1_000);
      expect(await counts(queue)).toMatchObject({ available: 1_000 });
    });

    it('answers an AckBatch of 10,000 items item by item, and refuses one of 10,001', async () => {
      const queue = newQueue();
      await enqueue(clients, { queue }, { queue }, { queue });
      const { worker, deliveries: held } = await holding(queue, 3);
      const stale = (i: number) => ({ jobId: uuidv7(), leaseToken: `stale-${i}`, result: undefined });
      const completions = [
        ...held.map((d) => ({ jobId: d.job!.id, leaseToken: d.leaseToken, result: 'done' })),
        ...Array.from({ length: 9_997 }, (_, i) => stale(i)),
      ];
      const { results } = await clients.workers.ackBatch({ workerId: worker.workerId, completions });
      expect(results).toHaveLength(10_000);
      expect(results.slice(0, 3).map((r) => r.ok)).toEqual([true, true, true]);
      expect(new Set(results.slice(3).map((r) => r.errorCode))).toEqual(new Set(['not_found']));
      expect(await counts(queue)).toMatchObject({ completed: 3, active: 0 });

      const tooMany = [...completions, stale(10_000)];
      expect(await rpcError(clients.workers.ackBatch({ workerId: worker.workerId, completions: tooMany }))).toMatchObject({
        code: Status.INVALID_ARGUMENT,
        fields: ['completions'],
      });
    });

    it('answers an AckBatch of 10,000 items with long ids in an answer a default client can receive', async () => {
      // Just under the 4 MiB a request may have: ids are refused item by item, and the answer must still arrive.
      const completions = Array.from({ length: 10_000 }, (_, i) => ({
        jobId: `${i}`.padEnd(400, 'j'),
        leaseToken: 'token',
        result: undefined,
      }));
      const { results } = await clients.workers.ackBatch({ workerId: 'w-long-ids', completions });
      expect(new Set(results.map((r) => r.errorCode))).toEqual(new Set(['invalid_request']));
    });
  });

  describe('finding 5: answers a default client cannot receive', () => {
    it('answers an Enqueue of just under 4 MiB so that a default client receives it, or refuses it storing nothing', async () => {
      const queue = newQueue();
      const jobs = Array.from({ length: 1_000 }, () => ({ type: 'a', queue, args: ['x'.repeat(4_170)] }));
      const call = clients.jobs.enqueue({ jobs });
      const failure = await call.then(
        () => undefined,
        () => rpcError(call),
      );
      const answer = failure === undefined ? 'the jobs' : (failure.reason ?? `no answer the client could read: ${failure.message}`);
      const stored = (await counts(queue))?.available ?? 0;
      expect([
        ['the jobs', 1_000],
        ['payload_too_large', 0],
        ['invalid_request', 0],
      ]).toContainEqual([answer, stored]);
    });
  });

  describe('finding 9: long ids', () => {
    const longId = 'i'.repeat(40_000);

    it.each([
      ['GetJob', () => clients.jobs.getJob({ jobId: longId }, promptly()), 'job_id'],
      ['CancelJob', () => clients.jobs.cancelJob({ jobId: longId }, promptly()), 'job_id'],
      ['Register', () => clients.workers.register({ workerId: longId, queues: ['default'] }, promptly()), 'worker_id'],
      ['Deregister', () => clients.workers.deregister({ workerId: longId }, promptly()), 'worker_id'],
      ['Ack', () => clients.workers.ack({ workerId: 'w', jobId: longId, leaseToken: 't' }, promptly()), 'job_id'],
      ['ExtendLease', () => clients.workers.extendLease({ workerId: 'w', jobId: uuidv7(), leaseToken: longId }, promptly()), 'lease_token'],
      [
        'SetWorkerState',
        () =>
          clients.operator.setWorkerState(
            { state: WorkerState.WORKER_STATE_QUIET, target: { $case: 'workerId', value: longId } },
            promptly(),
          ),
        'worker_id',
      ],
      ['ListWorkers', () => clients.operator.listWorkers({ pageToken: longId }, promptly()), 'page_token'],
    ] as const)('answers %s with a 40,000-character id at once, in trailers a default client accepts', async (_method, call, field) => {
      const refused = await rpcError(call);
      expect(refused).toMatchObject({ code: Status.INVALID_ARGUMENT, fields: [field] });
      expect(refused.message.length).toBeLessThan(1_000);
      expect(Object.values(refused.metadata).every((value) => value.length <= 200)).toBe(true);
    });
  });

  describe('finding 10: client errors answered as client errors', () => {
    const fetchWaiting = (seconds: bigint, nanos: number) =>
      withSecondsNanos(FetchRequest.encode({ workerId: 'w', queues: [], maxWait: undefined }).finish(), 3, { seconds, nanos });

    it.each([
      ['bytes that do not decode', () => raw.jobs.enqueue(Uint8Array.of(0x0a, 0xff, 0xff, 0xff)), 'request'],
      [
        'args nested 120 levels',
        () => raw.jobs.enqueue(enqueueRequestBytes([concatBytes(job(), lengthDelimited(5, nestedListValueBytes(120)))])),
        'request',
      ],
      [
        'args nested 40 levels',
        () => raw.jobs.enqueue(enqueueRequestBytes([concatBytes(job(), lengthDelimited(5, nestedListValueBytes(40)))])),
        'jobs[0].args[0]',
      ],
      [
        'Timestamp seconds beyond the safe range',
        () => raw.jobs.enqueue(enqueueRequestBytes([withSecondsNanos(job(), 9, { seconds: 2n ** 60n, nanos: 0 })])),
        'request',
      ],
      ['Duration seconds beyond the safe range', () => readAll(raw.workers.fetch(fetchWaiting(2n ** 60n, 0))), 'request'],
      ['a negative max_wait', () => readAll(raw.workers.fetch(fetchWaiting(-1n, 0))), 'max_wait'],
      ['a max_wait of minus one nanosecond', () => readAll(raw.workers.fetch(fetchWaiting(0n, -1))), 'max_wait'],
      ['a max_wait of 25 days', () => readAll(raw.workers.fetch(fetchWaiting(25n * 86_400n, 0))), 'max_wait'],
      ['a worker id of invalid UTF-8', () => raw.workers.register(lengthDelimited(1, invalidUtf8())), 'worker_id'],
      [
        'a job id of invalid UTF-8',
        () => raw.jobs.getJob(lengthDelimited(1, invalidUtf8('0190a5b2-0000-7000-8000-00000000000'))),
        'job_id',
      ],
      ['a Beat of a worker id of invalid UTF-8', () => readAll(raw.workers.beat(once(lengthDelimited(1, invalidUtf8())))), 'worker_id'],
    ] as const)('answers %s with INVALID_ARGUMENT', async (_what, call, field) => {
      expect(await rpcError(call)).toMatchObject({ code: Status.INVALID_ARGUMENT, fields: [field] });
    });

    it('ends a Fetch whose max_wait is under a millisecond at once, rather than never', async () => {
      const worker = await TestWorker.register(clients, { queues: [newQueue()] });
      const request = FetchRequest.encode({ workerId: worker.workerId, queues: [], maxWait: { seconds: 0, nanos: 1 } }).finish();
      const abort = new AbortController();
      const ended = readAll(raw.workers.fetch(request, { signal: abort.signal }));
      try {
        expect(await within(ended, 3_000, 'the Fetch stream to end')).toEqual([]);
      } finally {
        abort.abort();
        await ended.catch(() => {});
      }
    });

    it('keeps two different invalid UTF-8 ids apart: neither becomes a worker', async () => {
      for (const bad of [Uint8Array.of(0x77, 0x80), Uint8Array.of(0x77, 0x81)]) {
        expect(await rpcError(raw.workers.register(lengthDelimited(1, bad)))).toMatchObject({ code: Status.INVALID_ARGUMENT });
      }
      const beat = BeatRequest.encode(
        BeatRequest.fromPartial({ workerId: 'w\ufffd', state: WorkerState.WORKER_STATE_RUNNING, sequence: 1 }),
      ).finish();
      expect(await rpcError(readAll(raw.workers.beat(once(beat))))).toMatchObject({ code: Status.INVALID_ARGUMENT, fields: ['worker_id'] });
    });
  });

  describe('the store between a claim and the expiry pass', () => {
    it('stays consistent while a job a claim passed over for its expiry waits to be discarded', async () => {
      const queue = newQueue();
      const expiring = await enqueueOne(clients, { queue, expiresAt: new Date(clock.now() + 1_000) });
      clock.advance(2_000);
      const fresh = await enqueueOne(clients, { queue });
      const { deliveries: held } = await holding(queue, 1);
      expect(held.map((d) => d.job!.id)).toEqual([fresh.id]);
      expect(await server.audit()).toEqual([]);
      await server.runMaintenance();
      expect((await getJob(clients, expiring.id)).state).toBe(JobState.JOB_STATE_DISCARDED);
      expect(await server.audit()).toEqual([]);
    });
  });
});

/** The first `n` deliveries of a Fetch stream, across messages. */
async function deliveries(fetch: StreamReader<{ deliveries: Delivery[] }>, n: number): Promise<Delivery[]> {
  const taken: Delivery[] = [];
  while (taken.length < n)
    taken.push(
      ...(
        await within(
          fetch.nextMatching((m) => m.deliveries.length > 0),
          10_000,
          `${n} deliveries`,
        )
      ).deliveries,
    );
  return taken;
}

/** Every message of a server stream, once it ends. */
async function readAll<T>(stream: AsyncIterable<T>): Promise<T[]> {
  const messages: T[] = [];
  for await (const message of stream) messages.push(message);
  return messages;
}

/** A client stream of one message. */
async function* once(message: Uint8Array): AsyncGenerator<Uint8Array> {
  yield message;
}
