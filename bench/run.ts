import { performance } from 'node:perf_hooks';
import { createChannel, createClient } from 'nice-grpc';
import { HealthDefinition } from 'nice-grpc-server-health';
import type { Delivery } from '../gen/ojs/server/v1/worker_service';
import { BenchWorker, connect, noopJob, type Connection } from './ojs-clients';
import { startServerProcess } from './server-process';

/**
 * `npm run bench`: end-to-end throughput (producers enqueueing batches,
 * workers on Fetch streams acking in coalesced batches) and the
 * enqueue-to-delivery latency seen by an idle waiting worker. The server runs
 * in its own process; the clients run here. Every loop is bounded.
 */
const JOBS = Number(process.env['BENCH_JOBS'] ?? 200_000);
const PRODUCERS = 4;
const ENQUEUE_BATCH = 200;
const WORKERS = 4;
const CONCURRENCY = 200;
const LATENCY_SAMPLES = Number(process.env['BENCH_LATENCY_SAMPLES'] ?? 5_000);
const WARMUP_SAMPLES = 1_000;

async function throughput(address: string): Promise<number> {
  const queue = 'bench-throughput';
  const connections = Array.from({ length: WORKERS }, () => connect(address));
  let completed = 0;
  let resolveDone!: () => void;
  const done = new Promise<void>((resolve) => {
    resolveDone = resolve;
  });
  const workers = connections.map(
    (connection, i) =>
      new BenchWorker(connection, `bench-worker-${i}`, (deliveries) => {
        for (const delivery of deliveries) workers[i]!.complete(delivery);
        completed += deliveries.length;
        if (completed >= JOBS) resolveDone();
      }),
  );
  await Promise.all(workers.map((worker) => worker.start([queue], CONCURRENCY)));

  const producer = connect(address);
  const started = performance.now();
  let next = 0;
  await Promise.all(
    Array.from({ length: PRODUCERS }, async () => {
      while (next < JOBS) {
        const count = Math.min(ENQUEUE_BATCH, JOBS - next);
        const jobs = Array.from({ length: count }, (_, i) => noopJob(queue, next + i));
        next += count;
        await producer.jobs.enqueue({ jobs, pending: false });
      }
    }),
  );
  await done;
  const elapsedS = (performance.now() - started) / 1000;
  await Promise.all(workers.map((worker) => worker.stop()));
  for (const c of [...connections, producer]) c.channel.close();
  return JOBS / elapsedS;
}

interface Percentiles {
  p50: number;
  p99: number;
}

function percentiles(samples: number[]): Percentiles {
  samples.sort((a, b) => a - b);
  const at = (q: number): number => samples[Math.min(samples.length - 1, Math.floor(q * samples.length))]!;
  return { p50: at(0.5), p99: at(0.99) };
}

/** The floor: a bare unary round trip (grpc.health.v1.Health/Check) on the same machine. */
async function unaryRoundTrip(address: string): Promise<Percentiles> {
  const channel = createChannel(address);
  const health = createClient(HealthDefinition, channel);
  const samples: number[] = [];
  for (let i = 0; i < LATENCY_SAMPLES + WARMUP_SAMPLES; i++) {
    const started = performance.now();
    await health.check({ service: '' });
    if (i >= WARMUP_SAMPLES) samples.push(performance.now() - started);
  }
  channel.close();
  return percentiles(samples);
}

async function latency(address: string): Promise<Percentiles> {
  const queue = 'bench-latency';
  const connection: Connection = connect(address);
  const workerId = 'bench-latency-worker';
  let arrived: ((delivery: Delivery) => void) | undefined;
  const worker = new BenchWorker(connection, workerId, (deliveries) => {
    for (const delivery of deliveries) arrived?.(delivery);
  });
  await worker.start([queue], 1);
  const samples: number[] = [];
  for (let i = 0; i < LATENCY_SAMPLES + WARMUP_SAMPLES; i++) {
    const delivered = new Promise<Delivery>((resolve) => {
      arrived = resolve;
    });
    const started = performance.now();
    await connection.jobs.enqueue({ jobs: [noopJob(queue, i)], pending: false });
    const delivery = await delivered;
    if (i >= WARMUP_SAMPLES) samples.push(performance.now() - started);
    // Ack and wait for it, so the worker is idle and waiting again before the next sample.
    await connection.workers.ack({ workerId, jobId: delivery.job!.id, leaseToken: delivery.leaseToken });
  }
  await worker.stop();
  connection.channel.close();
  return percentiles(samples);
}

async function main(): Promise<void> {
  // BENCH_ADDRESS points the clients at a server started by hand (to profile it, say).
  const external = process.env['BENCH_ADDRESS'];
  const server = external === undefined ? await startServerProcess() : { address: external, stop: async () => {} };
  try {
    // Latency first, while the server is fresh; then sustained throughput.
    const { p50, p99 } = await latency(server.address);
    const floor = await unaryRoundTrip(server.address);
    const jobsPerSecond = await throughput(server.address);
    console.log(`memory store: ${JOBS} no-op jobs, ${PRODUCERS} producers (batches of ${ENQUEUE_BATCH}), ${WORKERS} workers x concurrency ${CONCURRENCY}`);
    console.log(`  throughput            ${Math.round(jobsPerSecond)} jobs/s end to end`);
    console.log(`  enqueue->delivery     p50 ${p50.toFixed(2)} ms, p99 ${p99.toFixed(2)} ms (idle worker, ${LATENCY_SAMPLES} samples)`);
    console.log(`  unary round trip      p50 ${floor.p50.toFixed(2)} ms, p99 ${floor.p99.toFixed(2)} ms (Health/Check, the transport's floor)`);
  } finally {
    await server.stop();
  }
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
