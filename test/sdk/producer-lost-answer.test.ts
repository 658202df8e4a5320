import { ClientError, Status } from 'nice-grpc';
import { uuidv7 } from 'uuidv7';
import { Producer, type Job, type JobSpec } from '../../packages/sdk/src';
import { CuttingProxy } from '../support/cutting-proxy';
import { getJob } from '../support/jobs';
import { TestServer, type Clients } from '../support/test-server';

/**
 * A batch the server stored whose answer the network lost: the producer's
 * retry finds every id taken. Those are its own jobs, so every caller gets
 * its stored job, and none is stored twice.
 */
describe('an SDK producer whose Enqueue answer is lost', () => {
  let server: TestServer;
  let clients: Clients;
  let proxy: CuttingProxy;
  let producer: Producer;

  beforeAll(async () => {
    server = await TestServer.start();
    clients = server.connect();
  });
  beforeEach(async () => {
    proxy = await CuttingProxy.start(server.address);
    producer = new Producer({ address: proxy.address });
  });
  afterEach(async () => {
    producer.close();
    await proxy.close();
  });
  afterAll(async () => {
    await server.stop();
  });

  type SpecWithId = JobSpec & { id: string };

  const specs = (queue: string, count: number): SpecWithId[] =>
    Array.from({ length: count }, (_, i) => ({ id: uuidv7(), type: 'producer.lost_answer', queue, args: [i] }));

  const ids = (sent: SpecWithId[]): string[] => sent.map((spec) => spec.id);

  /** A caller's answer: its job's id, or the status it was refused with. */
  const answer = (result: PromiseSettledResult<Job>): string => {
    if (result.status === 'fulfilled') return result.value.id;
    const reason: unknown = result.reason;
    return reason instanceof ClientError ? Status[reason.code] : String(reason);
  };

  /** What the server holds: the ids found by GetJob, and how many jobs `queue` has in all. */
  const stored = async (queue: string, sent: SpecWithId[]): Promise<{ ids: string[]; inQueue: number }> => {
    const found = await Promise.all(sent.map((spec) => getJob(clients, spec.id)));
    const { queues } = await clients.operator.listQueues({ pageSize: 1_000, pageToken: '' });
    const counts = queues.find((q) => q.name === queue);
    const inQueue = counts === undefined ? 0 : counts.available + counts.scheduled + counts.pending + counts.active + counts.completed;
    return { ids: found.map((job) => job.id), inQueue };
  };

  it('resolves an atomic batch with its stored jobs', async () => {
    const sent = specs('lost-answer-all', 4);
    const cut = proxy.cutNextAnswer();
    const answered = await producer.enqueueAll(sent);
    await cut;
    expect(answered.map((job) => job.id)).toEqual(ids(sent));
    expect(answered.map((job): unknown[] => job.args)).toEqual(sent.map((spec) => spec.args));
    expect(await stored('lost-answer-all', sent)).toEqual({ ids: ids(sent), inQueue: 4 });
  });

  it('resolves each caller of a coalesced batch with its stored job', async () => {
    const sent = specs('lost-answer-coalesced', 5);
    const cut = proxy.cutNextAnswer();
    const results = await Promise.allSettled(sent.map((spec) => producer.enqueue(spec)));
    await cut;
    expect(results.map(answer)).toEqual(ids(sent));
    expect(await stored('lost-answer-coalesced', sent)).toEqual({ ids: ids(sent), inQueue: 5 });
  });

  it('keeps the refusal of a batch whose id clashes with another job, when the refusal is what was lost', async () => {
    const sent = specs('lost-answer-clash', 3);
    const [other] = await clients.jobs
      .enqueue({ jobs: [{ id: sent[1]!.id, type: 'producer.other', queue: 'lost-answer-other' }] })
      .then((r) => r.jobs);
    const cut = proxy.cutNextAnswer();
    const results = await Promise.allSettled(sent.map((spec) => producer.enqueue(spec)));
    await cut;
    expect(results.map(answer)).toEqual([sent[0]!.id, 'ALREADY_EXISTS', sent[2]!.id]);
    expect(await getJob(clients, sent[1]!.id)).toEqual(other);
    expect((await stored('lost-answer-clash', [sent[0]!, sent[2]!])).inQueue).toBe(2);
  });

  it('still reads back a single job whose answer was lost', async () => {
    const sent = specs('lost-answer-one', 1);
    const cut = proxy.cutNextAnswer();
    const answered = await producer.enqueue(sent[0]!);
    await cut;
    expect(answered.id).toBe(sent[0]!.id);
    expect(await stored('lost-answer-one', sent)).toEqual({ ids: ids(sent), inQueue: 1 });
  });
});
