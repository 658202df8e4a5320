import { performance } from 'node:perf_hooks';
import { createChannel, createClient } from 'nice-grpc';
import { HealthDefinition } from 'nice-grpc-server-health';
import { Job } from '../gen/ojs/server/v1/job';
import { JobServiceDefinition } from '../gen/ojs/server/v1/job_service';
import { WorkerServiceDefinition, type Delivery } from '../gen/ojs/server/v1/worker_service';
import { Producer, Worker, type JobSpec, type Logger } from '../packages/sdk/src';
import { sample, type Percentiles } from './percentiles';
import { drive, SHAPE, type LoadMode, type LoadResult } from './shape';

/** The benchmark prints its own lines; the SDK speaks up only about problems, each kind once. */
const warned = new Set<string>();
const once = (print: (message: string, context: object) => void) => (context: object, message: string) => {
  if (warned.has(message)) return;
  warned.add(message);
  print(message, context);
};
const logger: Logger = { debug: () => {}, info: () => {}, warn: once(console.warn), error: once(console.error) };

/** SDK workers on `queue` whose handler does nothing but call `onJob`. */
async function startWorkers(
  address: string,
  queue: string,
  count: number,
  concurrency: number,
  onJob: (n: number) => void,
): Promise<Worker[]> {
  const workers = Array.from({ length: count }, () =>
    new Worker({ address, queues: [queue], concurrency, logger }).handle('bench.noop', async ([n]) => {
      onJob(n as number);
    }),
  );
  await Promise.all(workers.map((worker) => worker.start()));
  return workers;
}

/** A throughput run of this server, with the rate of its enqueues alone. */
export interface OjsLoadResult extends LoadResult {
  /** Jobs/s from the first enqueue to the answer to the last (workers running meanwhile). */
  enqueueRate: number;
}

/**
 * End-to-end jobs per second through the SDK, written as a user would:
 * `producer.enqueueAll` for batches, or many `await producer.enqueue(job)`
 * at once (the producer coalesces them into Enqueue calls); Workers take
 * jobs on Fetch streams and acknowledge them in coalesced AckBatch calls.
 * Every job carries `extra` (a unique policy, say). Bounded: exactly `jobs` jobs.
 */
export async function ojsThroughput(
  address: string,
  jobs: number,
  run: string,
  mode: LoadMode,
  extra: Partial<JobSpec> = {},
): Promise<OjsLoadResult> {
  const queue = `bench-${run}`;
  const stamps = new Float64Array(jobs);
  const delays: number[] = [];
  let resolveDone!: () => void;
  const done = new Promise<void>((resolve) => (resolveDone = resolve));
  const workers = await startWorkers(address, queue, SHAPE.workers, SHAPE.concurrency, (n) => {
    delays.push(performance.now() - stamps[n]!);
    if (delays.length >= jobs) resolveDone();
  });
  const producer = new Producer({ address });
  const job = (n: number): JobSpec => ({ ...extra, type: 'bench.noop', queue, args: [n] });
  const started = performance.now();
  await drive(jobs, mode, stamps, (numbers) =>
    mode === 'batched' ? producer.enqueueAll(numbers.map(job)) : producer.enqueue(job(numbers[0]!)),
  );
  const enqueueRate = jobs / ((performance.now() - started) / 1000);
  await done;
  const rate = jobs / ((performance.now() - started) / 1000);
  await Promise.all(workers.map((worker) => worker.stop()));
  producer.close();
  return { rate, delays, enqueueRate };
}

/** Enqueue-to-handler latency with an idle worker: one awaited enqueue at a time. */
export async function ojsLatency(address: string, samples: number, run: string): Promise<Percentiles> {
  const queue = `latency-${run}`;
  let arrived: (() => void) | undefined;
  const [worker] = await startWorkers(address, queue, 1, 4, () => arrived?.());
  const producer = new Producer({ address });
  const result = await sample(samples, Math.min(1_000, samples), async (i) => {
    const delivered = new Promise<void>((resolve) => (arrived = resolve));
    const started = performance.now();
    await producer.enqueue({ type: 'bench.noop', queue, args: [i] });
    await delivered;
    return performance.now() - started;
  });
  await worker!.stop();
  producer.close();
  return result;
}

/**
 * The same latency without the SDK: a hand-written worker waiting on its
 * Fetch stream, a single-job Enqueue, time to the delivery's arrival.
 */
export async function rawLatency(address: string, samples: number, run: string): Promise<Percentiles> {
  const channel = createChannel(address);
  const jobs = createClient(JobServiceDefinition, channel);
  const workers = createClient(WorkerServiceDefinition, channel);
  const workerId = `bench-raw-${run}`;
  const queue = `raw-${run}`;
  await workers.register({
    workerId,
    hostname: 'bench',
    pid: process.pid,
    queues: [queue],
    concurrency: 4,
    labels: [],
    startedAt: new Date(),
  });
  const abort = new AbortController();
  let arrived: ((delivery: Delivery) => void) | undefined;
  const consuming = (async () => {
    for await (const response of workers.fetch({ workerId, queues: [], maxWait: undefined }, { signal: abort.signal })) {
      for (const delivery of response.deliveries) arrived?.(delivery);
    }
  })().catch(() => {});
  const result = await sample(samples, Math.min(1_000, samples), async (i) => {
    const delivered = new Promise<Delivery>((resolve) => (arrived = resolve));
    const started = performance.now();
    await jobs.enqueue({ jobs: [{ ...Job.fromPartial({ type: 'bench.noop', queue, args: [i] }) }], pending: false });
    const delivery = await delivered;
    const ms = performance.now() - started;
    await workers.ack({ workerId, jobId: delivery.job!.id, leaseToken: delivery.leaseToken, result: undefined });
    return ms;
  });
  abort.abort();
  await consuming;
  await workers.deregister({ workerId });
  channel.close();
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
