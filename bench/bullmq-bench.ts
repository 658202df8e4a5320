import { performance } from 'node:perf_hooks';
import { Queue, Worker } from 'bullmq';
import { Arrivals, bothArrived } from './arrivals';
import { cleanUp, within, withoutStalling, WAIT_MS } from './deadline';
import { sample, type Percentiles } from './percentiles';
import { drive, SHAPE, type LoadMode, type LoadResult } from './shape';

/**
 * The same measurements written the way BullMQ's documentation writes them:
 * producers `addBulk` batches or `await queue.add` single jobs; Workers with
 * the same concurrency run a no-op processor. Completed jobs are removed, as
 * BullMQ recommends for high throughput. Every wait has the same deadline
 * as the OJS side's.
 */
const connectionOf = (port: number) => ({ host: '127.0.0.1', port, maxRetriesPerRequest: null });

async function closeAll(queue: Queue, workers: Worker[], waitMs: number): Promise<void> {
  await cleanUp(`${workers.length} BullMQ worker(s) closing`, waitMs, Promise.all(workers.map((worker) => worker.close())));
  await cleanUp('the BullMQ queue closing', waitMs, queue.close());
}

export async function bullmqThroughput(
  redisPort: number,
  jobs: number,
  run: string,
  mode: LoadMode,
  waitMs = WAIT_MS,
): Promise<LoadResult> {
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
  try {
    await within('the BullMQ workers starting', waitMs, Promise.all(workers.map((worker) => worker.waitUntilReady())));
    const started = performance.now();
    await drive(jobs, mode, stamps, (numbers) =>
      within<unknown>(
        `an add of ${numbers.length} job(s)`,
        waitMs,
        mode === 'batched' ? queue.addBulk(numbers.map((n) => ({ name: 'noop', data: { n } }))) : queue.add('noop', { n: numbers[0]! }),
      ),
    );
    await withoutStalling(`the processing of ${jobs} jobs`, waitMs, () => delays.length, done);
    return { rate: jobs / ((performance.now() - started) / 1000), delays };
  } finally {
    await closeAll(queue, workers, waitMs);
  }
}

/** Time from before `await queue.add(...)` to the processor starting, with an idle worker. */
export async function bullmqLatency(redisPort: number, samples: number, run: string, waitMs = WAIT_MS): Promise<Percentiles> {
  const name = `latency-${run}`;
  const connection = connectionOf(redisPort);
  const queue = new Queue(name, { connection, defaultJobOptions: { removeOnComplete: true } });
  const arrivals = new Arrivals<number>();
  const worker = new Worker(
    name,
    async (job: { data: { n: number } }) => {
      arrivals.arrived(job.data.n);
    },
    { connection, concurrency: 4 },
  );
  try {
    await within('the BullMQ worker starting', waitMs, worker.waitUntilReady());
    return await sample(samples, Math.min(500, samples), async (i) => {
      const delivered = arrivals.expect(i, `the processing of job ${i}`, waitMs);
      const started = performance.now();
      return (await bothArrived(within(`the add of job ${i}`, waitMs, queue.add('noop', { n: i })), delivered)) - started;
    });
  } finally {
    await closeAll(queue, [worker], waitMs);
  }
}
