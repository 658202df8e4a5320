import { performance } from 'node:perf_hooks';
import { createChannel, createClient } from 'nice-grpc';
import { HealthDefinition } from 'nice-grpc-server-health';
import { uuidv7 } from 'uuidv7';
import { Job } from '../packages/sdk/gen/ojs/server/v1/job';
import { connect } from '../packages/sdk/src/connection';
import { Producer, Worker, type JobSpec, type Logger } from '../packages/sdk/src';
import { Arrivals, bothArrived } from './arrivals';
import { call, cleanUp, within, withoutStalling, WAIT_MS } from './deadline';
import { OwnPauses, splitByPauses, type PauseSplit, type Span } from './own-pauses';
import { sample, type Percentiles } from './percentiles';
import { ProtocolWorker } from './protocol-worker';
import { drive, SHAPE, type LoadMode, type LoadResult } from './shape';

/** The benchmark prints its own lines; the SDK speaks up only about problems, each kind once. */
const warned = new Set<string>();
const once = (print: (message: string, context: object) => void) => (context: object, message: string) => {
  if (warned.has(message)) return;
  warned.add(message);
  print(message, context);
};
export const benchLogger: Logger = { debug: () => {}, info: () => {}, warn: once(console.warn), error: once(console.error) };

/** SDK workers on `queue` whose handler does nothing but call `onJob`; started within `waitMs`. */
async function startWorkers(
  address: string,
  queue: string,
  count: number,
  concurrency: number,
  onJob: (n: number) => void,
  waitMs: number,
): Promise<Worker[]> {
  const workers = Array.from({ length: count }, () =>
    new Worker({ address, queues: [queue], concurrency, logger: benchLogger }).handle('bench.noop', async ([n]) => {
      onJob(n as number);
    }),
  );
  try {
    await within(`${count} SDK worker(s) starting`, waitMs, Promise.all(workers.map((worker) => worker.start())));
  } catch (error) {
    await stopWorkers(workers, waitMs);
    throw error;
  }
  return workers;
}

const stopWorkers = (workers: Worker[], waitMs: number): Promise<void> =>
  cleanUp(`${workers.length} SDK worker(s) stopping`, waitMs, Promise.all(workers.map((worker) => worker.stop())));

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
 * Every job carries `extra` (a unique policy, say). Bounded: exactly `jobs`
 * jobs, each enqueue within `waitMs`, and the run fails once `waitMs` pass
 * without a delivery.
 */
export async function ojsThroughput(
  address: string,
  jobs: number,
  run: string,
  mode: LoadMode,
  extra: Partial<JobSpec> = {},
  waitMs = WAIT_MS,
): Promise<OjsLoadResult> {
  const queue = `bench-${run}`;
  const stamps = new Float64Array(jobs);
  const delays: number[] = [];
  let resolveDone!: () => void;
  const done = new Promise<void>((resolve) => (resolveDone = resolve));
  const workers = await startWorkers(
    address,
    queue,
    SHAPE.workers,
    SHAPE.concurrency,
    (n) => {
      delays.push(performance.now() - stamps[n]!);
      if (delays.length >= jobs) resolveDone();
    },
    waitMs,
  );
  const producer = new Producer({ address });
  try {
    const job = (n: number): JobSpec => ({ ...extra, type: 'bench.noop', queue, args: [n] });
    const started = performance.now();
    await drive(jobs, mode, stamps, (numbers) =>
      within<unknown>(
        `an Enqueue of ${numbers.length} job(s)`,
        waitMs,
        mode === 'batched' ? producer.enqueueAll(numbers.map(job)) : producer.enqueue(job(numbers[0]!)),
      ),
    );
    const enqueueRate = jobs / ((performance.now() - started) / 1000);
    await withoutStalling(`the delivery of ${jobs} jobs`, waitMs, () => delays.length, done);
    const rate = jobs / ((performance.now() - started) / 1000);
    return { rate, delays, enqueueRate };
  } finally {
    await stopWorkers(workers, waitMs);
    producer.close();
  }
}

/** Enqueue-to-handler latency with an idle worker: one awaited enqueue at a time, each delivery within `waitMs`. */
export async function ojsLatency(address: string, samples: number, run: string, waitMs = WAIT_MS): Promise<Percentiles> {
  const queue = `latency-${run}`;
  const arrivals = new Arrivals<number>();
  const workers = await startWorkers(address, queue, 1, 4, (n) => arrivals.arrived(n), waitMs);
  const producer = new Producer({ address });
  try {
    return await sample(samples, Math.min(1_000, samples), async (i) => {
      const delivered = arrivals.expect(i, `the delivery of job ${i}`, waitMs);
      const started = performance.now();
      const enqueued = within(`the Enqueue of job ${i}`, waitMs, producer.enqueue({ type: 'bench.noop', queue, args: [i] }));
      return (await bothArrived(enqueued, delivered)) - started;
    });
  } finally {
    await stopWorkers(workers, waitMs);
    producer.close();
  }
}

/**
 * What the hand-written worker measured (its samples after the warm-up, and
 * the same without those a pause of this process's collector fell in: it
 * is the worker and the producer), and what went wrong without stopping it.
 */
export interface RawLatencyResult extends Percentiles, PauseSplit {
  /** Acks refused because the job's lease was lost meanwhile (it was reclaimed). */
  refusedAcks: number;
  /** Times the server declared the worker dead and it registered again. */
  reRegistrations: number;
}

/**
 * The same latency without the SDK's producer and runner: a hand-written
 * worker (it beats like a real one) waiting on its Fetch stream, a
 * single-job Enqueue, time to the delivery's arrival. The next job is
 * enqueued once this one's Ack is answered (not timed), so that each meets
 * an idle worker and server, not the previous job's settlement. Every call
 * and every delivery has `waitMs`.
 */
export async function rawLatency(address: string, samples: number, run: string, waitMs = WAIT_MS): Promise<RawLatencyResult> {
  const connection = connect({ address });
  const queue = `raw-${run}`;
  const arrivals = new Arrivals<string>();
  const acks: Promise<unknown>[] = [];
  /** Each job's Ack, which its sample awaits (untimed) before the next job goes. */
  const acking = new Map<string, Promise<unknown>>();
  let ackFailure: Error | undefined;
  let worker: ProtocolWorker | undefined;
  /** This process's collector, watched while it samples. */
  const pauses = new OwnPauses();
  try {
    worker = await ProtocolWorker.start({
      client: connection.workers,
      streams: connection.workerStreams,
      workerId: `bench-raw-${run}-${uuidv7()}`,
      queues: [queue],
      concurrency: 4,
      waitMs,
      logger: benchLogger,
      onDelivery: (delivery, self) => {
        // Arrived before its Ack is set up: the arrival is stamped now.
        arrivals.arrived(delivery.job!.id);
        // Acked as it comes (a job delivered again after a lost lease too); a refusal is counted by the worker.
        const ack = self
          .ack(delivery)
          .catch((error: unknown) => (ackFailure ??= error instanceof Error ? error : new Error(String(error))));
        acks.push(ack);
        acking.set(delivery.job!.id, ack);
      },
    });
    const warmup = Math.min(1_000, samples);
    const spans: Span[] = [];
    const measured = await sample(samples, warmup, async (i) => {
      const id = uuidv7();
      const delivered = arrivals.expect(id, `the delivery of job ${i}`, waitMs);
      const start = performance.now();
      const enqueued = call(`the Enqueue of job ${i}`, waitMs, (signal) =>
        connection.jobs.enqueue({ jobs: [Job.fromPartial({ id, type: 'bench.noop', queue, args: [i] })], pending: false }, { signal }),
      );
      const end = await bothArrived(enqueued, delivered);
      if (i >= warmup) spans.push({ start, end });
      await acking.get(id);
      acking.delete(id);
      return end - start;
    });
    pauses.stop();
    await Promise.all(acks);
    if (ackFailure !== undefined) throw ackFailure;
    return {
      ...measured,
      refusedAcks: worker.refusedAcks,
      reRegistrations: worker.reRegistrations,
      ...splitByPauses(spans, pauses),
    };
  } finally {
    pauses.stop();
    // Acks still out when a wait failed: let them finish (each has its deadline) before the worker goes.
    await cleanUp('the last Acks', waitMs, Promise.all(acks));
    if (worker !== undefined) await worker.stop();
    connection.close();
  }
}

/** The transport's floor: a bare unary round trip (grpc.health.v1.Health/Check), each within `waitMs`. */
export async function unaryRoundTrip(address: string, samples: number, waitMs = WAIT_MS): Promise<Percentiles> {
  const channel = createChannel(address);
  const health = createClient(HealthDefinition, channel);
  try {
    return await sample(samples, Math.min(1_000, samples), async () => {
      const started = performance.now();
      await call('a Health/Check', waitMs, (signal) => health.check({ service: '' }, { signal }));
      return performance.now() - started;
    });
  } finally {
    channel.close();
  }
}
