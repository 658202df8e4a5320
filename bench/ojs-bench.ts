import { performance } from 'node:perf_hooks';
import { createChannel, createClient } from 'nice-grpc';
import { HealthDefinition } from 'nice-grpc-server-health';
import type { Delivery } from '../gen/ojs/server/v1/worker_service';
import { BenchWorker, connect, noopJob } from './ojs-clients';
import { sample, type Percentiles } from './percentiles';

export const OJS_SHAPE = {
  producers: Number(process.env['BENCH_PRODUCERS'] ?? 4),
  batch: 200,
  workers: Number(process.env['BENCH_WORKERS'] ?? 4),
  concurrency: Number(process.env['BENCH_CONCURRENCY'] ?? 200),
};

/**
 * End-to-end jobs per second: producers enqueue batches while workers take
 * jobs on Fetch streams and acknowledge them in AckBatch calls coalesced
 * over 1 ms. Bounded: exactly `jobs` jobs.
 */
export async function ojsThroughput(address: string, jobs: number, run: string): Promise<number> {
  const queue = `bench-${run}`;
  const { producers, batch, workers: workerCount, concurrency } = OJS_SHAPE;
  let completed = 0;
  let resolveDone!: () => void;
  const done = new Promise<void>((resolve) => (resolveDone = resolve));
  const workers: BenchWorker[] = Array.from({ length: workerCount }, (_, i) => {
    const worker: BenchWorker = new BenchWorker(connect(address), `bench-${run}-${i}`, (deliveries) => {
      for (const delivery of deliveries) worker.complete(delivery);
      completed += deliveries.length;
      if (completed >= jobs) resolveDone();
    });
    return worker;
  });
  await Promise.all(workers.map((worker) => worker.start([queue], concurrency)));
  const producer = connect(address);
  const started = performance.now();
  let next = 0;
  await Promise.all(
    Array.from({ length: producers }, async () => {
      while (next < jobs) {
        const count = Math.min(batch, jobs - next);
        const payload = Array.from({ length: count }, (_, i) => noopJob(queue, next + i));
        next += count;
        await producer.jobs.enqueue({ jobs: payload, pending: false });
      }
    }),
  );
  await done;
  const rate = jobs / ((performance.now() - started) / 1000);
  await Promise.all(workers.map((worker) => worker.stop()));
  producer.channel.close();
  return rate;
}

/** Enqueue-to-delivery latency seen by an idle worker waiting on its Fetch stream. */
export async function ojsLatency(address: string, samples: number, run: string): Promise<Percentiles> {
  const queue = `latency-${run}`;
  const connection = connect(address);
  const workerId = `bench-latency-${run}`;
  let arrived: ((delivery: Delivery) => void) | undefined;
  const worker = new BenchWorker(connection, workerId, (deliveries) => {
    for (const delivery of deliveries) arrived?.(delivery);
  });
  await worker.start([queue], 1);
  const result = await sample(samples, Math.min(1_000, samples), async (i) => {
    const delivered = new Promise<Delivery>((resolve) => (arrived = resolve));
    const started = performance.now();
    await connection.jobs.enqueue({ jobs: [noopJob(queue, i)], pending: false });
    const delivery = await delivered;
    const ms = performance.now() - started;
    // Ack and wait for it, so the worker is idle and waiting again before the next sample.
    await connection.workers.ack({ workerId, jobId: delivery.job!.id, leaseToken: delivery.leaseToken });
    return ms;
  });
  await worker.stop();
  connection.channel.close();
  return result;
}

/** The transport's floor: a bare unary round trip (grpc.health.v1.Health/Check). */
export async function unaryRoundTrip(address: string, samples: number): Promise<Percentiles> {
  const channel = createChannel(address);
  const health = createClient(HealthDefinition, channel);
  const result = await sample(samples, 1_000, async () => {
    const started = performance.now();
    await health.check({ service: '' });
    return performance.now() - started;
  });
  channel.close();
  return result;
}
