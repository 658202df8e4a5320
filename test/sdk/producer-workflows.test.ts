import { ClientError, Status } from 'nice-grpc';
import { uuidv7 } from 'uuidv7';
import { batch, chain, group, Producer, Worker, type JobContext } from '../../packages/sdk/src';
import { CuttingProxy } from '../support/cutting-proxy';
import { listJobIds } from '../support/job-listing';
import { RecordingLogger } from '../support/silent-logger';
import { TestServer, type Clients } from '../support/test-server';

/** What a handler saw of its workflow. */
interface Seen {
  parentResults: Record<string, unknown> | undefined;
  workflowId: string | undefined;
  workflowStep: string | undefined;
}

/**
 * Workflows from the SDK: the producer's builders, createWorkflow,
 * getWorkflow and cancelWorkflow against a real server, and a real SDK
 * worker whose handlers read parentResults, workflowId and workflowStep.
 */
describe('SDK workflows', () => {
  let server: TestServer;
  let clients: Clients;
  let producer: Producer;
  let worker: Worker;
  const seen = new Map<string, Seen>();
  const record = (ctx: JobContext): void => {
    seen.set(ctx.job.id, { parentResults: ctx.parentResults, workflowId: ctx.workflowId, workflowStep: ctx.workflowStep });
  };

  beforeAll(async () => {
    server = await TestServer.start({ runMaintenance: true });
    clients = server.connect();
    producer = new Producer({ address: server.address });
    worker = new Worker({ address: server.address, queues: ['sdk-workflows'], concurrency: 4, logger: new RecordingLogger() })
      .handle<[number], number>('wf.add', async ([n], ctx) => {
        record(ctx);
        const earlier = Object.values(ctx.parentResults ?? {}).filter((value) => typeof value === 'number');
        return earlier.reduce((sum, value) => sum + value, n);
      })
      .handle('wf.collect', async (_args, ctx) => {
        record(ctx);
        return ctx.parentResults;
      });
    await worker.start();
  });
  afterAll(async () => {
    producer.close();
    await worker.stop({ force: true });
    await server.stop();
  });

  const add = (n: number) => ({ type: 'wf.add', queue: 'sdk-workflows', args: [n] });
  const collect = { type: 'wf.collect', queue: 'sdk-workflows', args: [] };

  it('runs a chain built with the builders; each handler sees its parent results, workflow and step', async () => {
    const created = await producer.createWorkflow({ ...chain(add(1), add(10), group(add(100), add(1000)), collect), name: 'sums' });
    expect(created).toMatchObject({ type: 'chain', name: 'sums', state: 'pending', jobCount: 5 });
    expect(created.steps.map((step) => [step.key, step.role, step.state])).toEqual([
      ['0', 'step', 'pending'],
      ['1', 'step', 'waiting'],
      ['2.0', 'job', 'waiting'],
      ['2.1', 'job', 'waiting'],
      ['3', 'step', 'waiting'],
    ]);
    const last = created.steps[4]!.jobId;
    expect(await producer.result(last, { timeoutMs: 10_000 })).toEqual({ '0': 1, '1': 11, '2': { '0': 112, '1': 1012 } });
    const done = await producer.getWorkflow(created.id);
    expect(done).toMatchObject({ state: 'completed', completedCount: 5, failedCount: 0 });
    expect(done.steps.map((step) => step.result)).toEqual([1, 11, 112, 1012, { '0': 1, '1': 11, '2': { '0': 112, '1': 1012 } }]);
    expect(seen.get(created.steps[0]!.jobId)).toEqual({ parentResults: {}, workflowId: created.id, workflowStep: '0' });
    expect(seen.get(created.steps[2]!.jobId)).toEqual({ parentResults: { '0': 1, '1': 11 }, workflowId: created.id, workflowStep: '2.0' });
  });

  it('gives a job outside a workflow no parent results', async () => {
    const job = await producer.enqueue(add(5));
    expect(await producer.result(job, { timeoutMs: 10_000 })).toBe(5);
    expect(seen.get(job.id)).toEqual({ parentResults: undefined, workflowId: undefined, workflowStep: undefined });
  });

  it('runs a batch with its callbacks, and names a callback that did not fire', async () => {
    const created = await producer.createWorkflow(batch([add(2), add(3)], { onSuccess: collect, onFailure: add(0) }));
    expect(await producer.result(created.steps[2]!.jobId, { timeoutMs: 10_000 })).toEqual({ '0': 2, '1': 3 });
    const done = await producer.getWorkflow(created.id);
    expect(done.steps.map((step) => [step.role, step.state, step.cancelReason])).toEqual([
      ['job', 'completed', undefined],
      ['job', 'completed', undefined],
      ['on_success', 'completed', undefined],
      ['on_failure', 'cancelled', 'not_triggered'],
    ]);
    expect(done.state).toBe('completed');
  });

  it('cancels a workflow, and is refused when it has finished or does not exist', async () => {
    const created = await producer.createWorkflow(chain({ type: 'wf.idle', queue: 'sdk-workflows-idle', args: [] }, add(1)));
    const cancelled = await producer.cancelWorkflow(created.id);
    expect(cancelled.state).toBe('cancelled');
    expect(cancelled.steps.map((step) => step.cancelReason)).toEqual(['workflow_cancelled', 'workflow_cancelled']);
    const code = (error: unknown): unknown => (error instanceof ClientError ? Status[error.code] : error);
    expect(await producer.cancelWorkflow(created.id).catch(code)).toBe('FAILED_PRECONDITION');
    expect(await producer.getWorkflow(uuidv7()).catch(code)).toBe('NOT_FOUND');
    expect(await producer.createWorkflow(group()).catch(code)).toBe('INVALID_ARGUMENT');
  });

  it('returns the stored workflow when the answer of CreateWorkflow was lost, storing it once', async () => {
    const proxy = await CuttingProxy.start(server.address);
    const viaProxy = new Producer({ address: proxy.address });
    try {
      const queue = `sdk-workflows-lost-${uuidv7().slice(-8)}`;
      const cut = proxy.cutNextAnswer();
      const created = await viaProxy.createWorkflow(group({ type: 'wf.idle', queue, args: [] }, { type: 'wf.idle', queue, args: [] }));
      await cut;
      expect(created.steps).toHaveLength(2);
      const listed = await listJobIds(clients, { queue });
      expect(listed.ids.toSorted()).toEqual(created.steps.map((step) => step.jobId).toSorted());
    } finally {
      viaProxy.close();
      await proxy.close();
    }
  });
});
