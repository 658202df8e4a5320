import { ClientError, Status } from 'nice-grpc';
import { JobState } from '../../gen/ojs/server/v1/job';
import { Producer } from '../../sdk';
import { getJob } from '../support/jobs';
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
});
