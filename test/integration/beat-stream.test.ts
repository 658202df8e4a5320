import { randomUUID } from 'node:crypto';
import { StreamDecoder } from '@grpc/grpc-js/build/src/stream-decoder';
import { Metadata, Status } from 'nice-grpc';
import { JobState } from '../../gen/ojs/server/v1/job';
import { WorkerState, type FetchResponse } from '../../gen/ojs/server/v1/worker_service';
import { enqueueOne, getJob } from '../support/jobs';
import { ManualClock } from '../support/manual-clock';
import { rpcError } from '../support/rpc-error';
import { TestServer, TEST_PROTOCOL, type Clients } from '../support/test-server';
import { TestWorker, type BeatStream } from '../support/test-worker';

const { WORKER_STATE_RUNNING: RUNNING, WORKER_STATE_QUIET: QUIET, WORKER_STATE_TERMINATE: TERMINATE } = WorkerState;
const hasDeliveries = (m: FetchResponse): boolean => m.deliveries.length > 0;

describe('the Beat stream', () => {
  const clock = new ManualClock();
  let server: TestServer;
  let clients: Clients;

  beforeAll(async () => {
    server = await TestServer.start({ clock });
    clients = server.connect();
  });
  afterAll(() => server.stop());

  it('answers every beat with the desired state, the server time and the sequence answered', async () => {
    const worker = await TestWorker.register(clients);
    const beat = worker.openBeat();
    for (const sequence of [1, 2, 3]) {
      const reply = await beat.beat(RUNNING, [], sequence);
      expect(reply).toEqual({
        state: RUNNING,
        serverTime: new Date(clock.now()),
        cancelledJobIds: [],
        timedOutJobIds: [],
        reclaimedJobIds: [],
        inReplyTo: sequence,
      });
    }
    beat.close();
  });

  it('echoes x-ojs-request-id and names the server version as it opens, before any beat', async () => {
    const worker = await TestWorker.register(clients);
    let beat: BeatStream | undefined;
    const header = await new Promise<Metadata>((onHeader) => {
      beat = worker.openBeat({ metadata: Metadata({ 'x-ojs-request-id': 'beat-7' }), onHeader });
    });
    expect(header.get('x-ojs-request-id')).toBe('beat-7');
    expect(header.get('x-ojs-server-version')).toBe('test');
    beat!.close();
  });

  it('pushes an operator directive at once, without waiting for a beat', async () => {
    const worker = await TestWorker.register(clients, { labels: [`canary-${randomUUID()}`] });
    const beat = worker.openBeat();
    await beat.beat();
    await clients.operator.setWorkerState({ state: QUIET, target: { $case: 'workerId', value: worker.workerId } });
    expect(await beat.responses.next()).toMatchObject({ state: QUIET, inReplyTo: 0 });
    expect((await beat.beat(QUIET)).state).toBe(QUIET);
    beat.close();
  });

  it('pushes a directive given to every worker with a label or a queue', async () => {
    const label = `pool-${randomUUID()}`;
    const queue = `q-${randomUUID().slice(0, 8)}`;
    const [a, b] = [await TestWorker.register(clients, { labels: [label] }), await TestWorker.register(clients, { queues: [queue] })];
    const [beatA, beatB] = [a.openBeat(), b.openBeat()];
    await Promise.all([beatA.beat(), beatB.beat()]);
    const byLabel = await clients.operator.setWorkerState({ state: TERMINATE, target: { $case: 'label', value: label } });
    expect(byLabel.workerIds).toEqual([a.workerId]);
    expect(await beatA.responses.next()).toMatchObject({ state: TERMINATE });
    await clients.operator.setWorkerState({ state: QUIET, target: { $case: 'queue', value: queue } });
    expect(await beatB.responses.next()).toMatchObject({ state: QUIET });
    beatA.close();
    beatB.close();
  });

  it('pushes the id of a held job that is cancelled, and refuses its Ack', async () => {
    const queue = `q-${randomUUID().slice(0, 8)}`;
    const worker = await TestWorker.register(clients, { queues: [queue] });
    const beat = worker.openBeat();
    await beat.beat();
    const fetch = worker.openFetch();
    const job = await enqueueOne(clients, { queue });
    const [delivery] = (await fetch.nextMatching(hasDeliveries)).deliveries;
    await clients.jobs.cancelJob({ jobId: job.id });
    expect(await beat.responses.next()).toMatchObject({ cancelledJobIds: [job.id], state: RUNNING, inReplyTo: 0 });
    expect(await rpcError(worker.ack(delivery!))).toMatchObject({ code: Status.FAILED_PRECONDITION, reason: 'invalid_state' });
    // A beat that still lists it is told again.
    expect((await beat.beat(RUNNING, [job.id])).cancelledJobIds).toEqual([job.id]);
    fetch.close();
    beat.close();
  });

  it('restarts the visibility timeout of the jobs a beat lists', async () => {
    const queue = `q-${randomUUID().slice(0, 8)}`;
    const worker = await TestWorker.register(clients, { queues: [queue] });
    const beat = worker.openBeat();
    const fetch = worker.openFetch();
    const job = await enqueueOne(clients, { queue, visibilityTimeout: 10 });
    await fetch.nextMatching(hasDeliveries);
    for (let elapsed = 0; elapsed < 30_000; elapsed += 500) {
      clock.advance(500);
      await beat.beat(RUNNING, [job.id]);
      await server.runMaintenance();
    }
    expect(await getJob(clients, job.id)).toMatchObject({ state: JobState.JOB_STATE_ACTIVE, attempt: 1 });
    fetch.close();
    beat.close();
  });

  it('answers but otherwise ignores a late beat (sequence not above the last)', async () => {
    const worker = await TestWorker.register(clients);
    const beat = worker.openBeat();
    await beat.beat(RUNNING, [], 10);
    expect(await beat.beat(QUIET, [], 9)).toMatchObject({ state: RUNNING, inReplyTo: 9 });
    const info = (await clients.operator.listWorkers({ label: '', queue: '' })).workers.find((w) => w.workerId === worker.workerId);
    expect(info!.state).toBe(RUNNING);
    beat.close();
  });

  it('never moves a worker backward from terminate', async () => {
    const worker = await TestWorker.register(clients);
    const beat = worker.openBeat();
    await beat.beat(TERMINATE);
    expect((await beat.beat(RUNNING)).state).toBe(TERMINATE);
    expect(
      await rpcError(clients.operator.setWorkerState({ state: RUNNING, target: { $case: 'workerId', value: worker.workerId } })),
    ).toMatchObject({ code: Status.FAILED_PRECONDITION, reason: 'invalid_state' });
    beat.close();
  });

  it('does not push a quiet worker back to running in reply to its own beat', async () => {
    const worker = await TestWorker.register(clients);
    const beat = worker.openBeat();
    expect((await beat.beat(QUIET)).state).toBe(QUIET);
    expect((await beat.beat(RUNNING)).state).toBe(RUNNING);
    beat.close();
  });

  it('sends keepalives that carry the desired state', async () => {
    const fast = await TestServer.start({ protocol: { streamKeepaliveMs: 25 } });
    const worker = await TestWorker.register(fast.connect());
    const beat = worker.openBeat();
    await beat.beat(QUIET);
    expect(await beat.responses.next()).toMatchObject({ state: QUIET, inReplyTo: 0, cancelledJobIds: [] });
    beat.close();
    await fast.stop();
  });

  it('ends with NOT_FOUND for an unknown worker, and INVALID_ARGUMENT when the worker id changes', async () => {
    const ghost = await TestWorker.register(clients);
    await clients.workers.deregister({ workerId: ghost.workerId });
    const unknown = ghost.openBeat();
    unknown.send({ workerId: ghost.workerId, state: RUNNING, activeJobs: 0, activeJobIds: [], sequence: 1 });
    expect(await rpcError(unknown.responses.next())).toMatchObject({ code: Status.NOT_FOUND, reason: 'not_found' });

    const worker = await TestWorker.register(clients);
    const beat = worker.openBeat();
    await beat.beat();
    beat.send({ workerId: 'someone-else', state: RUNNING, activeJobs: 0, activeJobIds: [], sequence: 2 });
    expect(await rpcError(beat.responses.next())).toMatchObject({ code: Status.INVALID_ARGUMENT, fields: ['worker_id'] });
  });

  it('ends when the client half-closes', async () => {
    const worker = await TestWorker.register(clients);
    const beat = worker.openBeat();
    await beat.beat();
    beat.end();
    await expect(beat.responses.ended()).resolves.toEqual([]);
  });

  it('answers the beats sent just before the client half-closes, then ends', async () => {
    const worker = await TestWorker.register(clients);
    const beat = worker.openBeat();
    const sequences = [worker.nextSequence(), worker.nextSequence()];
    // Not waiting for the answers: the half-close reaches the server while the first beat is being handled.
    for (const sequence of sequences) beat.send({ workerId: worker.workerId, state: RUNNING, activeJobs: 0, activeJobIds: [], sequence });
    beat.end();
    const answers = await beat.responses.ended();
    expect(answers.map((answer) => answer.inReplyTo)).toEqual(sequences);
  });

  it('answers beats sent faster than it answers them, each once and in order, and goes on answering', async () => {
    const worker = await TestWorker.register(clients);
    const beat = worker.openBeat();
    const sequences = Array.from({ length: 30 }, () => worker.nextSequence());
    // Not waiting for the answers: beats arrive while earlier ones are handled, wait, and hold the stream back.
    for (const sequence of sequences) beat.send({ workerId: worker.workerId, state: RUNNING, activeJobs: 0, activeJobIds: [], sequence });
    const answers = [];
    for (let i = 0; i < sequences.length; i++) answers.push(await beat.responses.next());
    expect(answers.map((answer) => answer.inReplyTo)).toEqual(sequences);
    // Read again after the burst: the next beat is answered as any.
    const sequence = worker.nextSequence();
    expect(await beat.beat(RUNNING, [], sequence)).toMatchObject({ inReplyTo: sequence });
  });

  it('reports the heartbeat settings at registration', async () => {
    const reply = await clients.workers.register({
      workerId: `w-${randomUUID()}`,
      hostname: 'h',
      pid: 1,
      queues: [],
      concurrency: 0,
      labels: [],
    });
    expect(reply).toMatchObject({
      ok: true,
      serverTime: new Date(clock.now()),
      heartbeatInterval: { seconds: TEST_PROTOCOL.heartbeatIntervalMs / 1000, nanos: 0 },
      heartbeatTimeout: { seconds: TEST_PROTOCOL.heartbeatTimeoutMs / 1000, nanos: 0 },
      visibilityTimeoutDefault: { seconds: TEST_PROTOCOL.visibilityTimeoutMs / 1000, nanos: 0 },
    });
  });

  it("has grpc-js let go of a beat's bytes once the beat is read (decoder-release.ts)", () => {
    // The server installs it as it starts; grpc-js's decoder would otherwise keep them until the next beat.
    const decoder = new StreamDecoder(-1);
    const chunk = Buffer.alloc(8);
    chunk.writeUInt32BE(3, 1);
    expect(decoder.write(chunk)).toHaveLength(1);
    const { readCompressFlag, readPartialMessage } = decoder as unknown as { readCompressFlag: Buffer; readPartialMessage: Buffer[] };
    expect(readCompressFlag.buffer).not.toBe(chunk.buffer);
    expect(readPartialMessage).toHaveLength(0);
  });
});
