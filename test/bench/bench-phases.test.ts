import { randomUUID } from 'node:crypto';
import { createServer, type Socket } from 'node:net';
import type { Delivery } from '../../gen/ojs/server/v1/worker_service';
import { connect, type Connection } from '../../packages/sdk/src/connection';
import { ojsLatency, ojsThroughput, rawLatency, unaryRoundTrip, benchLogger } from '../../bench/ojs-bench';
import { Phases } from '../../bench/phases';
import { ProtocolWorker } from '../../bench/protocol-worker';
import { enqueueOne } from '../support/jobs';
import { ManualClock } from '../support/manual-clock';
import { TestServer, type Clients } from '../support/test-server';
import { eventually } from '../support/waiting';

/** Deadlines of the phases here: far past what a healthy run needs, well inside the test's timeout. */
const WAIT_MS = 5_000;

/** Phases whose lines are collected instead of printed. */
function collectingPhases(): { phases: Phases; lines: string[] } {
  const lines: string[] = [];
  return { phases: new Phases((line) => lines.push(line)), lines };
}

describe("the benchmark's hand-written worker", () => {
  const clock = new ManualClock();
  let server: TestServer;
  let clients: Clients;
  let connection: Connection;
  const workers: ProtocolWorker[] = [];

  beforeAll(async () => {
    // Beats every 50 ms of real time; the server's clock moves only when the test moves it.
    server = await TestServer.start({ clock, protocol: { heartbeatIntervalMs: 50, heartbeatTimeoutMs: 150 } });
    clients = server.connect();
    connection = connect({ address: server.address });
  });
  afterEach(async () => {
    for (const worker of workers.splice(0)) await worker.stop();
  });
  afterAll(async () => {
    connection.close();
    await server.stop();
  });

  async function startWorker(queue: string, onDelivery: (delivery: Delivery) => void = () => {}): Promise<ProtocolWorker> {
    const worker = await ProtocolWorker.start({
      client: connection.workers,
      streams: connection.workerStreams,
      workerId: `w-${randomUUID()}`,
      queues: [queue],
      concurrency: 4,
      waitMs: WAIT_MS,
      logger: benchLogger,
      onDelivery,
    });
    workers.push(worker);
    return worker;
  }

  const isListed = async (workerId: string): Promise<boolean> =>
    (await clients.operator.listWorkers({ label: '', queue: '' })).workers.some((w) => w.workerId === workerId);

  it('beats at the interval the server announced, so the server keeps it past any number of heartbeat timeouts', async () => {
    const worker = await startWorker(`q-${randomUUID().slice(0, 8)}`);
    for (let round = 0; round < 3; round++) {
      clock.advance(10 * 150);
      // Two more answers: at least one beat was recorded after the clock moved.
      const answered = worker.beatAnswers;
      await eventually(
        async () => (worker.beatAnswers >= answered + 2 ? true : undefined),
        () => `two beats answered after ${answered} (${worker.beatAnswers} so far)`,
      );
      await server.runMaintenance();
      expect(await isListed(worker.workerId)).toBe(true);
    }
    expect(worker.reRegistrations).toBe(0);
  });

  it('counts an Ack the server refuses (the job is no longer its lease), without failing', async () => {
    const queue = `q-${randomUUID().slice(0, 8)}`;
    const deliveries: Delivery[] = [];
    const worker = await startWorker(queue, (delivery) => deliveries.push(delivery));
    const job = await enqueueOne(clients, { queue });
    await eventually(
      async () => (deliveries.length > 0 ? true : undefined),
      () => 'the delivery',
    );
    await clients.jobs.cancelJob({ jobId: job.id });
    expect(await worker.ack(deliveries[0]!)).toBe(false);
    expect(worker.refusedAcks).toBe(1);
  });
});

describe("the benchmark's phases", () => {
  let server: TestServer;

  beforeAll(async () => {
    server = await TestServer.start();
  });
  afterAll(() => server.stop());

  it('run to the end with tiny sizes and print their figures', async () => {
    const { phases, lines } = collectingPhases();
    await phases.run('throughput', async () => {
      const result = await ojsThroughput(server.address, 300, `t-${randomUUID().slice(0, 8)}`, 'batched', {}, WAIT_MS);
      phases.print(`rate ${result.rate} delays ${result.delays.length}`);
    });
    await phases.run('SDK latency', async () => {
      const p = await ojsLatency(server.address, 20, `s-${randomUUID().slice(0, 8)}`, WAIT_MS);
      phases.print(`sdk p50 ${p.p50}`);
    });
    await phases.run('raw latency', async () => {
      const r = await rawLatency(server.address, 20, `r-${randomUUID().slice(0, 8)}`, WAIT_MS);
      phases.print(`raw p50 ${r.p50} refused ${r.refusedAcks} registered again ${r.reRegistrations} samples ${r.samples}`);
      expect(r.pausedSamples).toBeLessThanOrEqual(r.samples);
      expect(r.unpaused === undefined).toBe(r.pausedSamples === r.samples);
    });
    await phases.run('round trip', async () => phases.print(`unary p50 ${(await unaryRoundTrip(server.address, 20, WAIT_MS)).p50}`));
    expect(phases.failures).toEqual([]);
    expect(phases.exitCode).toBe(0);
    expect(lines).toEqual([
      expect.stringMatching(/^rate \d+(\.\d+)? delays 300$/),
      expect.stringMatching(/^sdk p50 \d/),
      expect.stringMatching(/^raw p50 \d.* refused 0 registered again 0 samples 20$/),
      expect.stringMatching(/^unary p50 \d/),
    ]);
  });

  it('report a phase whose server never answers, once its deadline passes, and still run the next', async () => {
    // A listener that accepts connections and never answers: a server stuck or far too slow.
    const sockets = new Set<Socket>();
    const silent = createServer((socket) => sockets.add(socket));
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
    const silentAddress = `127.0.0.1:${(silent.address() as { port: number }).port}`;
    const { phases, lines } = collectingPhases();
    try {
      await phases.run('before', async () => phases.print(`unary p50 ${(await unaryRoundTrip(server.address, 5, WAIT_MS)).p50}`));
      await phases.run('stuck server', async () => {
        await rawLatency(silentAddress, 5, 'stuck', 300);
        phases.print('never printed');
      });
      await phases.run('after', async () => phases.print(`unary p50 ${(await unaryRoundTrip(server.address, 5, WAIT_MS)).p50}`));
    } finally {
      for (const socket of sockets) socket.destroy();
      silent.close();
    }
    expect(lines).toEqual([
      expect.stringMatching(/^unary p50 \d/),
      expect.stringMatching(/^ {2}phase stuck server failed: the Register of worker .* did not happen within 300 ms$/),
      expect.stringMatching(/^unary p50 \d/),
    ]);
    expect(phases.failures.map((f) => f.name)).toEqual(['stuck server']);
    expect(phases.failures[0]!.reason).toMatch(/did not happen within 300 ms$/);
    expect(phases.exitCode).toBe(1);
    expect(phases.summary()).toContain('1 phase(s) failed: stuck server');
  });

  it('report a phase whose server stops under it, and still run the next', async () => {
    const doomed = await TestServer.start();
    const { phases, lines } = collectingPhases();
    await phases.run('stopped server', async () => {
      // Far more samples than can be taken before the server is gone; its failure is held until the server stopped.
      const failure = rawLatency(doomed.address, 1_000_000, 'doomed', WAIT_MS).then(
        () => new Error('a million samples were taken'),
        (error: unknown) => error,
      );
      await doomed.stop();
      throw await failure;
    });
    await phases.run('after', async () => phases.print(`unary p50 ${(await unaryRoundTrip(server.address, 5, WAIT_MS)).p50}`));
    expect(lines).toEqual([expect.stringMatching(/^ {2}phase stopped server failed: ./), expect.stringMatching(/^unary p50 \d/)]);
    expect(phases.exitCode).toBe(1);
  });
});
