import { performance } from 'node:perf_hooks';

/** The load both systems get, the same for each (environment variables override). */
export const SHAPE = {
  /** Producers enqueueing batches of `batch` jobs. */
  producers: Number(process.env['BENCH_PRODUCERS'] ?? 4),
  batch: 200,
  /** Producers awaiting each single-job enqueue, in the one-job-per-call run. */
  singleProducers: Number(process.env['BENCH_SINGLE_PRODUCERS'] ?? 32),
  /** SDK workers of the throughput runs (BENCH_WORKERS sizes the fleet of BENCH_ONLY=workers). */
  workers: Number(process.env['BENCH_SDK_WORKERS'] ?? 4),
  concurrency: Number(process.env['BENCH_CONCURRENCY'] ?? 200),
};

export type LoadMode = 'batched' | 'single';

/** What one throughput run measures: jobs/s, and enqueue-to-handler latency of every job under that load. */
export interface LoadResult {
  rate: number;
  /** Milliseconds from the producer's call to the handler starting, per job. */
  delays: number[];
}

/**
 * Enqueues jobs 0..jobs-1: `batched` producers each send batches of
 * `SHAPE.batch`, `single` producers each await one job at a time. Each job's
 * start time is written to `stamps`, for the handler to measure its delay.
 */
export async function drive(
  jobs: number,
  mode: LoadMode,
  stamps: Float64Array,
  enqueue: (numbers: number[]) => Promise<unknown>,
): Promise<void> {
  let next = 0;
  const producers = mode === 'batched' ? SHAPE.producers : SHAPE.singleProducers;
  const size = mode === 'batched' ? SHAPE.batch : 1;
  await Promise.all(
    Array.from({ length: producers }, async () => {
      while (next < jobs) {
        const count = Math.min(size, jobs - next);
        const numbers = Array.from({ length: count }, (_, i) => next + i);
        next += count;
        const now = performance.now();
        for (const n of numbers) stamps[n] = now;
        await enqueue(numbers);
      }
    }),
  );
}
