import { performance } from 'node:perf_hooks';
import { Queue, Worker } from 'bullmq';
import { sample, type Percentiles } from './percentiles';
import { drive, SHAPE, type LoadMode, type LoadResult } from './shape';

/**
 * The same measurements written the way BullMQ's documentation writes them:
 * producers `addBulk` batches or `await queue.add` single jobs; Workers with
 * the same concurrency run a no-op processor. Completed jobs are removed, as
 * BullMQ recommends for high throughput.
 */
const connectionOf = (port: number) => ({ host: '127.0.0.1', port, maxRetriesPerRequest: null });

export async function bullmqThroughput(redisPort: number, jobs: number, run: string, mode: LoadMode): Promise<LoadResult> {
  const name = `bench-${run}`;
  const connection = connectionOf(redisPort);
  const queue = new Queue(name, { connection, defaultJobOptions: { removeOnComplete: true } });
  const stamps = new Float64Array(jobs);
  const delays: number[] = [];
  let resolveDone!: () => void;
  const done = new Promise<void>((resolve) => (resolveDone = resolve));
  const processor = async (job: { data: { n: number } }): Promise<void> => {
    delays.push(performance.now() - stamps[job.data.n]!);
    if (delays.length >= jobs) resolveDone();
  };
  const workers = Array.from({ length: SHAPE.workers }, () => new Worker(name, processor, { connection, concurrency: SHAPE.concurrency }));
  await Promise.all(workers.map((worker) => worker.waitUntilReady()));
  const started = performance.now();
  await drive(jobs, mode, stamps, (numbers) =>
    mode === 'batched' ? queue.addBulk(numbers.map((n) => ({ name: 'noop', data: { n } }))) : queue.add('noop', { n: numbers[0]! }),
  );
  await done;
  const rate = jobs / ((performance.now() - started) / 1000);
  await Promise.all(workers.map((worker) => worker.close()));
  await queue.close();
  return { rate, delays };
}

/** Time from before `await queue.add(...)` to the processor starting, with an idle worker. */
export async function bullmqLatency(redisPort: number, samples: number, run: string): Promise<Percentiles> {
  const name = `latency-${run}`;
  const connection = connectionOf(redisPort);
  const queue = new Queue(name, { connection, defaultJobOptions: { removeOnComplete: true } });
  let arrived: (() => void) | undefined;
  const worker = new Worker(
    name,
    async () => {
      arrived?.();
    },
    { connection, concurrency: 4 },
  );
  await worker.waitUntilReady();
  const result = await sample(samples, Math.min(500, samples), async (i) => {
    const started = performance.now();
    const delivered = new Promise<void>((resolve) => (arrived = resolve));
    await queue.add('noop', { n: i });
    await delivered;
    return performance.now() - started;
  });
  await worker.close();
  await queue.close();
  return result;
}
