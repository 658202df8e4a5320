import type { ClientReadableStream } from '@grpc/grpc-js';
import { performance } from 'node:perf_hooks';
import { encodeBody } from '../src/store/redis/job-codec';
import { cpuPerJob } from './cpu-accounting';
import { within, withoutStalling, WAIT_MS } from './deadline';
import { bytesCall, bytesClient, withBenchServer, type BytesCallback } from './grpc-floors';
import { LEAST_SEPARATORS, LEAST_SERVICE } from './least-server';
import { benchJobs } from './redis-floors';
import { withRedis } from './servers';
import { SHAPE } from './shape';

const { RS, US } = LEAST_SEPARATORS;

/** The least server's methods as a generic client sees them (bytes in, bytes out). */
interface LeastClient {
  enqueue(bytes: Buffer, callback: BytesCallback): void;
  fetch(bytes: Buffer): ClientReadableStream<Buffer>;
  ack(bytes: Buffer, callback: BytesCallback): void;
  close(): void;
}

const leastClient = (port: number): LeastClient => bytesClient(LEAST_SERVICE, 'Least', port) as unknown as LeastClient;

/** What the least server's batched run cost: its rate, and CPU per job of each process. */
export interface LeastServerCost {
  rate: number;
  /** Jobs the least server answered as completed: every job once. */
  completed: number;
  clientMicros: number;
  serverMicros: number;
  redisMicros: number;
}

/**
 * The floor under the server's CPU per job: the batched load (SHAPE's
 * producers sending batches of SHAPE.batch, SHAPE.workers workers taking
 * up to SHAPE.concurrency jobs each and acknowledging each delivery's jobs
 * in one call) against bench/least-server.ts, grpc-js and ioredis over the
 * least Redis functions and nothing else, on a redis-server of its own.
 * The jobs' stored bodies are the OJS server's for the same specs. Every
 * enqueue has WAIT_MS, and the run fails once WAIT_MS pass with no job
 * completed.
 */
export function leastServerCost(jobs: number): Promise<LeastServerCost> {
  return withRedis((redis) =>
    withBenchServer('the least server', 'least-server.js', [redis.url], process.env, async ({ port, pid }) => {
      const batches: Buffer[] = [];
      for (let first = 0; first < jobs; first += SHAPE.batch) {
        const batch = benchJobs(Math.min(SHAPE.batch, jobs - first), first);
        batches.push(Buffer.from(batch.map((job) => `${job.id}${US}${encodeBody(job)}`).join(RS)));
      }
      const measured = await cpuPerJob(jobs, [pid, redis.pid!], () => batchedRun(port, jobs, batches));
      const [serverMicros, redisMicros] = measured.others as [number, number];
      return { ...measured.result, clientMicros: measured.self, serverMicros, redisMicros };
    }),
  );
}

/**
 * Runs the batched load through the least server at `port`: jobs/s from the
 * first enqueue to the last ack's answer, and the jobs completed then.
 */
async function batchedRun(port: number, jobs: number, batches: readonly Buffer[]): Promise<{ rate: number; completed: number }> {
  const producer = leastClient(port);
  const workers = Array.from({ length: SHAPE.workers }, () => leastClient(port));
  const streams: ClientReadableStream<Buffer>[] = [];
  let completed = 0;
  let failed!: (error: Error) => void;
  let finished!: () => void;
  const done = new Promise<void>((resolve, reject) => {
    finished = resolve;
    failed = reject;
  });
  // Awaited once every batch is enqueued: an Ack failing before then must not end the process as unhandled.
  done.catch(() => {});
  try {
    const acknowledge = async (client: LeastClient, ack: Buffer): Promise<void> => {
      let answer: string;
      try {
        answer = await bytesCall((bytes, callback) => client.ack(bytes, callback), ack);
      } catch (error) {
        failed(error as Error);
        return;
      }
      completed += Number(answer);
      if (completed >= jobs) finished();
    };
    const started = performance.now();
    workers.forEach((client, w) => {
      const workerId = `least-${w}`;
      const stream = client.fetch(Buffer.from(`${workerId}${US}${SHAPE.concurrency}`));
      stream.on('data', (message: Buffer) => {
        const [nonce, ...records] = message.toString().split(RS) as [string, ...string[]];
        let ack = workerId;
        for (const record of records) {
          const [id, attempt] = record.split(US, 2) as [string, string];
          ack += `${RS}${id}${US}${nonce}.${attempt}`;
        }
        void acknowledge(client, Buffer.from(ack));
      });
      // A cancelled stream ends with an error event: without a listener it would be thrown.
      stream.on('error', () => {});
      streams.push(stream);
    });
    let next = 0;
    await Promise.all(
      Array.from({ length: SHAPE.producers }, async () => {
        while (next < batches.length) {
          const batch = batches[next++]!;
          await within(
            'an Enqueue of the least server',
            WAIT_MS,
            bytesCall((bytes, callback) => producer.enqueue(bytes, callback), batch),
          );
        }
      }),
    );
    await withoutStalling(`the least server completing ${jobs} jobs`, WAIT_MS, () => completed, done);
    return { rate: jobs / ((performance.now() - started) / 1000), completed };
  } finally {
    for (const stream of streams) stream.cancel();
    for (const client of [producer, ...workers]) client.close();
  }
}
