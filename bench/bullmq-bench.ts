import { performance } from 'node:perf_hooks';
import { Queue, Worker } from 'bullmq';
import { sample, type Percentiles } from './percentiles';

/**
 * The same two measurements written the way BullMQ's documentation writes
 * them: producers add jobs (addBulk for batches), Workers with the given
 * concurrency run a no-op processor. Completed jobs are removed, as BullMQ
 * recommends for high throughput.
 */
export const BULLMQ_SHAPE = {
  producers: Number(process.env['BENCH_PRODUCERS'] ?? 4),
  batch: 200,
  workers: Number(process.env['BENCH_WORKERS'] ?? 4),
  concurrency: Number(process.env['BENCH_CONCURRENCY'] ?? 200),
};

const connectionOf = (port: number) => ({ host: '127.0.0.1', port, maxRetriesPerRequest: null });

export async function bullmqThroughput(redisPort: number, jobs: number, run: string): Promise<number> {
  const name = `bench-${run}`;
  const connection = connectionOf(redisPort);
  const queue = new Queue(name, { connection, defaultJobOptions: { removeOnComplete: true } });
  let completed = 0;
  let resolveDone!: () => void;
  const done = new Promise<void>((resolve) => (resolveDone = resolve));
  const workers = Array.from({ length: BULLMQ_SHAPE.workers }, () => {
    const worker = new Worker(name, async () => undefined, { connection, concurrency: BULLMQ_SHAPE.concurrency });
    worker.on('completed', () => {
      completed += 1;
      if (completed >= jobs) resolveDone();
    });
    return worker;
  });
  await Promise.all(workers.map((worker) => worker.waitUntilReady()));
  const started = performance.now();
  let next = 0;
  await Promise.all(
    Array.from({ length: BULLMQ_SHAPE.producers }, async () => {
      while (next < jobs) {
        const count = Math.min(BULLMQ_SHAPE.batch, jobs - next);
        const payload = Array.from({ length: count }, (_, i) => ({ name: 'noop', data: { n: next + i } }));
        next += count;
        await queue.addBulk(payload);
      }
    }),
  );
  await done;
  const rate = jobs / ((performance.now() - started) / 1000);
  await Promise.all(workers.map((worker) => worker.close()));
  await queue.close();
  return rate;
}

/** Time from before `await queue.add(...)` to the processor starting, with an idle worker. */
export async function bullmqLatency(redisPort: number, samples: number, run: string): Promise<Percentiles> {
  const name = `latency-${run}`;
  const connection = connectionOf(redisPort);
  const queue = new Queue(name, { connection, defaultJobOptions: { removeOnComplete: true } });
  let arrived: (() => void) | undefined;
  let finished: (() => void) | undefined;
  const worker = new Worker(
    name,
    async () => {
      arrived?.();
    },
    { connection, concurrency: 1 },
  );
  worker.on('completed', () => finished?.());
  await worker.waitUntilReady();
  const result = await sample(samples, Math.min(500, samples), async (i) => {
    const started = performance.now();
    const delivered = new Promise<void>((resolve) => (arrived = resolve));
    const completed = new Promise<void>((resolve) => (finished = resolve));
    await queue.add('noop', { n: i });
    await delivered;
    const ms = performance.now() - started;
    await completed;
    return ms;
  });
  await worker.close();
  await queue.close();
  return result;
}
