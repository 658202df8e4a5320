import { Metadata, Status } from 'nice-grpc';
import { JobState, OnExhaustion } from '../../gen/ojs/server/v1/job';
import { enqueue, enqueueOne, getJob, jobSpec } from '../support/jobs';
import { rpcError } from '../support/rpc-error';
import { TestServer, type Clients } from '../support/test-server';

describe('Enqueue', () => {
  let server: TestServer;
  let clients: Clients;

  beforeAll(async () => {
    server = await TestServer.start();
    clients = server.connect();
  });
  afterAll(() => server.stop());

  it('returns the stored envelope with defaults and system-managed fields set', async () => {
    const job = await enqueueOne(clients, {
      type: 'email.send',
      args: ['to@example.com', 3, { html: true }, null],
      meta: { tenant: 'acme' },
    });
    expect(job).toMatchObject({
      specversion: '1.0',
      type: 'email.send',
      queue: 'default',
      args: ['to@example.com', 3, { html: true }, null],
      meta: { tenant: 'acme' },
      priority: 0,
      timeout: 60,
      visibilityTimeout: 60,
      state: JobState.JOB_STATE_AVAILABLE,
      attempt: 0,
      retry: {
        maxAttempts: 3,
        initialInterval: 'PT1S',
        backoffCoefficient: 2,
        maxInterval: 'PT5M',
        jitter: true,
        nonRetryableErrors: [],
        onExhaustion: OnExhaustion.ON_EXHAUSTION_DISCARD,
      },
    });
    expect(job.id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    expect(job.createdAt).toEqual(job.enqueuedAt);
    expect(await getJob(clients, job.id)).toEqual(job);
  });

  it('ignores system-managed fields a client sets', async () => {
    const job = await enqueueOne(clients, {
      state: JobState.JOB_STATE_COMPLETED,
      attempt: 7,
      createdAt: new Date('2000-01-01T00:00:00Z'),
      completedAt: new Date('2000-01-01T00:00:00Z'),
      errors: [{ type: 'Forged', attempt: 1 }],
      result: 'forged',
      workerId: 'someone',
      deadLetter: true,
    });
    expect(job).toMatchObject({ state: JobState.JOB_STATE_AVAILABLE, attempt: 0, errors: [], workerId: '', deadLetter: false });
    expect(job.result).toBeUndefined();
    expect(job.completedAt).toBeUndefined();
    expect(job.createdAt!.getFullYear()).toBeGreaterThan(2020);
  });

  it('merges a partial retry policy with the defaults', async () => {
    const job = await enqueueOne(clients, {
      retry: { maxAttempts: 10, nonRetryableErrors: ['auth.*'], onExhaustion: OnExhaustion.ON_EXHAUSTION_DEAD_LETTER },
    });
    expect(job.retry).toMatchObject({
      maxAttempts: 10,
      initialInterval: 'PT1S',
      jitter: true,
      nonRetryableErrors: ['auth.*'],
      onExhaustion: OnExhaustion.ON_EXHAUSTION_DEAD_LETTER,
    });
  });

  it('refuses bad input with INVALID_ARGUMENT, naming every bad field', async () => {
    const failure = await rpcError(
      clients.jobs.enqueue({
        jobs: [jobSpec(), jobSpec({ type: 'Bad Type', queue: 'UPPER', priority: 5000, retry: { maxInterval: 'five minutes' } })],
      }),
    );
    expect(failure).toMatchObject({ code: Status.INVALID_ARGUMENT, reason: 'invalid_payload', domain: 'openjobspec.org' });
    expect(failure.fields).toEqual(['jobs[1].type', 'jobs[1].queue', 'jobs[1].priority', 'jobs[1].retry.max_interval']);
    expect(failure.message).toContain('jobs[1].type');
  });

  it('refuses args that are not JSON-native', async () => {
    const failure = await rpcError(clients.jobs.enqueue({ jobs: [jobSpec({ args: [1, Number.NaN] })] }));
    expect(failure).toMatchObject({ code: Status.INVALID_ARGUMENT, fields: ['jobs[0].args[1]'] });
  });

  it('refuses an empty batch', async () => {
    expect(await rpcError(clients.jobs.enqueue({ jobs: [] }))).toMatchObject({
      code: Status.INVALID_ARGUMENT,
      reason: 'invalid_request',
      fields: ['jobs'],
    });
  });

  it('stores a batch atomically: one bad job stores none', async () => {
    const before = await clients.operator.listQueues({});
    await rpcError(clients.jobs.enqueue({ jobs: [jobSpec({ queue: 'atomic' }), jobSpec({ queue: 'atomic', type: '' })] }));
    const after = await clients.operator.listQueues({});
    expect(after.queues.find((q) => q.name === 'atomic')).toEqual(before.queues.find((q) => q.name === 'atomic'));
  });

  it('makes enqueue idempotent with a client-chosen id', async () => {
    const id = '01961234-5678-7abc-8ef0-0123456789ab';
    await enqueueOne(clients, { id });
    expect(await rpcError(enqueueOne(clients, { id }))).toMatchObject({
      code: Status.ALREADY_EXISTS,
      reason: 'duplicate',
      metadata: { job_id: id },
    });
  });

  it('schedules jobs with a future scheduled_at and stages pending ones', async () => {
    const scheduled = await enqueueOne(clients, { scheduledAt: new Date(Date.now() + 3_600_000) });
    expect(scheduled.state).toBe(JobState.JOB_STATE_SCHEDULED);
    expect(scheduled.enqueuedAt).toBeUndefined();
    const { jobs } = await clients.jobs.enqueue({ jobs: [jobSpec()], pending: true });
    expect(jobs[0]!.state).toBe(JobState.JOB_STATE_PENDING);
  });

  it('keeps the caller trace context in meta, unless the producer set its own', async () => {
    const traceparent = '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01';
    const metadata = Metadata({ traceparent, tracestate: 'ojs=1' });
    const { jobs } = await clients.jobs.enqueue({ jobs: [jobSpec(), jobSpec({ meta: { traceparent: '00-own-01' } })] }, { metadata });
    expect(jobs[0]!.meta).toEqual({ traceparent, tracestate: 'ojs=1' });
    expect(jobs[1]!.meta).toEqual({ traceparent: '00-own-01' });
  });

  it('echoes x-ojs-request-id and names the server version', async () => {
    let header: Metadata | undefined;
    await clients.jobs.enqueue(
      { jobs: [jobSpec()] },
      { metadata: Metadata({ 'x-ojs-request-id': 'req-42' }), onHeader: (h) => (header = h) },
    );
    expect(header?.get('x-ojs-request-id')).toBe('req-42');
    expect(header?.get('x-ojs-server-version')).toBe('test');
  });

  it('enqueues many jobs in one call', async () => {
    const jobs = await enqueue(clients, ...Array.from({ length: 300 }, (_, i) => ({ queue: 'bulk', args: [i] })));
    expect(jobs.map((j): unknown => j.args[0])).toEqual(Array.from({ length: 300 }, (_, i) => i));
    expect(new Set(jobs.map((j) => j.id)).size).toBe(300);
  });
});
