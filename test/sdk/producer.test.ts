import { ClientError, Status } from 'nice-grpc';
import { uuidv7 } from 'uuidv7';
import { JobState } from '../../gen/ojs/server/v1/job';
import { Producer } from '../../packages/sdk/src';
import { MemoryJobStore } from '../../src/store/memory/memory-job-store';
import { getJob } from '../support/jobs';
import { rpcError } from '../support/rpc-error';
import { TestServer, type Clients } from '../support/test-server';

describe('the SDK producer', () => {
  let server: TestServer;
  let clients: Clients;
  let producer: Producer;

  beforeAll(async () => {
    server = await TestServer.start();
    clients = server.connect();
    producer = new Producer({ address: server.address });
  });
  afterAll(async () => {
    producer.close();
    await server.stop();
  });

  it('gives each of many concurrent enqueues its own stored job', async () => {
    const stored = await Promise.all(Array.from({ length: 300 }, (_, i) => producer.enqueue({ type: 'producer.job', args: [i] })));
    expect(stored.map((job): unknown => job.args[0])).toEqual(Array.from({ length: 300 }, (_, i) => i));
    expect(new Set(stored.map((job) => job.id)).size).toBe(300);
    expect((await getJob(clients, stored[299]!.id)).state).toBe(JobState.JOB_STATE_AVAILABLE);
  });

  it('fails only the bad job of a batch that shares a tick with good ones', async () => {
    const results = await Promise.allSettled([
      producer.enqueue({ type: 'producer.good' }),
      producer.enqueue({ type: 'Not A Type' }),
      producer.enqueue({ type: 'producer.good' }),
    ]);
    expect(results.map((r) => r.status)).toEqual(['fulfilled', 'rejected', 'fulfilled']);
    const refusal = (results[1] as PromiseRejectedResult).reason as unknown;
    expect(refusal).toBeInstanceOf(ClientError);
    expect((refusal as ClientError).code).toBe(Status.INVALID_ARGUMENT);
  });

  it.each([
    ['over the server job limit (1 MiB)', 2_000_000],
    ['too large for any call (4 MiB)', 5_000_000],
  ])('fails only the job %s of a batch that shares a tick with good ones', async (_, argsChars) => {
    const results = await Promise.allSettled([
      producer.enqueue({ type: 'producer.good' }),
      producer.enqueue({ type: 'producer.huge', args: ['x'.repeat(argsChars)] }),
      producer.enqueue({ type: 'producer.good' }),
    ]);
    expect(results.map((r) => r.status)).toEqual(['fulfilled', 'rejected', 'fulfilled']);
    const refusal = (results[1] as PromiseRejectedResult).reason as unknown;
    expect(refusal).toBeInstanceOf(ClientError);
    expect((refusal as ClientError).code).toBe(Status.RESOURCE_EXHAUSTED);
  });

  it('does not split a batch refused because the store is full: the same call may pass later', async () => {
    const full = await TestServer.start({ store: async () => new MemoryJobStore({ maxJobs: 3 }) });
    const bounded = new Producer({ address: full.address });
    try {
      const results = await Promise.allSettled(Array.from({ length: 5 }, (_, i) => bounded.enqueue({ type: 'producer.full', args: [i] })));
      const refusals = results.map((r) => (r.status === 'rejected' && r.reason instanceof ClientError ? Status[r.reason.code] : r.status));
      expect(refusals).toEqual(results.map(() => 'RESOURCE_EXHAUSTED'));
      expect((await full.connect().operator.listQueues({ pageSize: 10, pageToken: '' })).queues).toEqual([]);
    } finally {
      bounded.close();
      await full.stop();
    }
  });

  it('runs enqueue middleware around every job, outermost first', async () => {
    const seen: string[] = [];
    const tagged = new Producer({ address: server.address })
      .use(async (job, next) => {
        seen.push('outer');
        return next({ ...job, meta: { ...job.meta, tenant: 'acme' } });
      })
      .use(async (job, next) => {
        seen.push(`inner:${String(job.meta?.['tenant'])}`);
        const stored = await next(job);
        seen.push(`stored:${stored.id.length}`);
        return stored;
      });
    const job = await tagged.enqueue({ type: 'producer.tagged' });
    tagged.close();
    expect(job.meta).toEqual({ tenant: 'acme' });
    expect(seen).toEqual(['outer', 'inner:acme', 'stored:36']);
  });

  it('enqueues a batch atomically: one bad job and none is stored', async () => {
    const id = '01961234-5678-7abc-8ef0-123456789abc';
    await expect(producer.enqueueAll([{ type: 'producer.atomic', id }, { type: 'BAD' }])).rejects.toThrow(ClientError);
    expect((await clients.jobs.getJob({ jobId: id }).catch((e: ClientError) => e)) instanceof ClientError).toBe(true);
    const stored = await producer.enqueueAll([
      { type: 'producer.atomic', args: [1] },
      { type: 'producer.atomic', args: [2] },
    ]);
    expect(stored.map((job): unknown[] => job.args)).toEqual([[1], [2]]);
  });

  it('takes an atomic batch of 1,000 jobs, the most one Enqueue may carry', async () => {
    const stored = await producer.enqueueAll(Array.from({ length: 1_000 }, (_, i) => ({ type: 'producer.many', args: [i] })));
    expect(stored).toHaveLength(1_000);
    expect(stored[999]!.args).toEqual([999]);
  });

  it('refuses an atomic batch of more than 1,000 jobs before sending any', async () => {
    const specs = Array.from({ length: 1_001 }, (_, i) => ({ type: 'producer.too_many', id: uuidv7(), args: [i] }));
    const refusal: unknown = await producer.enqueueAll(specs).catch((error: unknown) => error);
    expect(refusal).toBeInstanceOf(RangeError);
    expect((refusal as RangeError).message).toMatch(/at most 1000 jobs .*got 1001; an atomic batch cannot be split/);
    expect(await rpcError(clients.jobs.getJob({ jobId: specs[0]!.id }))).toMatchObject({ code: Status.NOT_FOUND });
  });

  it('refuses a coalescing batch size the server would refuse', () => {
    expect(() => new Producer({ address: server.address, maxBatch: 1_001 })).toThrow(/maxBatch must be a whole number from 1 to 1000/);
    expect(() => new Producer({ address: server.address, maxBatch: 0 })).toThrow(RangeError);
  });

  it('registers, reads, lists, pauses, resumes and unregisters cron schedules, with names for the policies', async () => {
    const job = {
      type: 'report.generate',
      queue: 'sdk-reports',
      args: ['daily'],
      retry: { maxAttempts: 2, onExhaustion: 'dead_letter' as const },
    };
    const spec = {
      name: 'sdk-daily-report',
      cron: '0 9 * * *',
      timezone: 'America/New_York',
      job,
      overlapPolicy: 'cancel_previous' as const,
    };
    const { schedule, created } = await producer.registerSchedule(spec);
    expect(created).toBe(true);
    expect(schedule).toMatchObject({ ...spec, missedTickPolicy: 'run_once', paused: false, runCount: 0, lastRunAt: undefined });
    expect(schedule.job).toMatchObject(job);
    expect([13, 14]).toContain(schedule.nextRunAt!.getUTCHours()); // 9 AM in New York, EDT or EST
    expect((await producer.registerSchedule({ ...spec, cron: '30 9 * * *' })).created).toBe(false);
    expect(await producer.getSchedule(spec.name)).toMatchObject({ cron: '30 9 * * *', createdAt: schedule.createdAt });

    expect(await producer.pauseSchedule(spec.name)).toMatchObject({ paused: true, nextRunAt: undefined });
    const paused: string[] = [];
    for await (const listed of producer.listSchedules({ paused: true })) paused.push(listed.name);
    expect(paused).toContain(spec.name);
    expect((await producer.resumeSchedule(spec.name)).nextRunAt).toBeInstanceOf(Date);
    await producer.unregisterSchedule(spec.name);
    expect(await producer.getSchedule(spec.name).catch((error: ClientError) => error.code)).toBe(Status.NOT_FOUND);
    const refusal = await producer.registerSchedule({ ...spec, cron: 'every day' }).catch((error: ClientError) => error.code);
    expect(refusal).toBe(Status.INVALID_ARGUMENT);
  });
});
