import { RedisServerProcess } from '../tools/redis-server';
import { ServerProcess } from '../tools/server-process';
import { bullmqLatency, bullmqThroughput } from './bullmq-bench';
import type { JobSpec } from '../packages/sdk/src';
import { ojsLatency, ojsThroughput, rawLatency, unaryRoundTrip, type OjsLoadResult } from './ojs-bench';
import { percentiles, type Percentiles } from './percentiles';
import { cpuPerJob } from './cpu-accounting';
import { CountingRedisProxy, redisCommandsExecuted, resetRedisStats } from './redis-accounting';
import { SHAPE, type LoadMode, type LoadResult } from './shape';

/**
 * `npm run bench`: end-to-end throughput and enqueue-to-delivery latency of
 * this server on the in-memory store and on Redis, and of BullMQ on the same
 * redis-server in the same run. Servers run as their own processes; the SDK
 * clients and BullMQ run here. Every loop is bounded.
 */
const JOBS = Number(process.env['BENCH_JOBS'] ?? 100_000);
const SAMPLES = Number(process.env['BENCH_LATENCY_SAMPLES'] ?? 3_000);
const ACCOUNTING_JOBS = Math.min(JOBS, 20_000);
/** Runs per side when the event log's cost is measured: on and off alternate, so drift in the machine hits both. */
const EVENT_LOG_RUNS = Number(process.env['BENCH_EVENT_LOG_RUNS'] ?? 3);
/** Runs per side when uniqueness's cost is measured, alternating in the same way. */
const UNIQUE_RUNS = Number(process.env['BENCH_UNIQUE_RUNS'] ?? 3);
/** A unique policy every job of the load can carry: its args differ, so no job is a duplicate of another. */
const UNIQUE_POLICY: Partial<JobSpec> = { unique: { keys: ['type', 'queue', 'args'], onConflict: 'reject' } };

const ms = (p: Percentiles): string => `p50 ${p.p50.toFixed(2)} ms, p99 ${p.p99.toFixed(2)} ms`;
const us = (n: number): string => `${n.toFixed(0)} µs`;
const rate = (n: number): string => `${Math.round(n).toLocaleString('en-US')} jobs/s`.padEnd(14);
const load = (r: LoadResult): string => `${rate(r.rate)} delivery under load ${ms(percentiles(r.delays))}`;
const MODES: { mode: LoadMode; title: string }[] = [
  { mode: 'batched', title: `${SHAPE.producers} producers x batches of ${SHAPE.batch}` },
  { mode: 'single', title: `${SHAPE.singleProducers} producers awaiting one job per call` },
];

async function withServerProcess<T>(env: Record<string, string>, use: (server: ServerProcess) => Promise<T>): Promise<T> {
  const server = await ServerProcess.start(env);
  try {
    return await use(server);
  } finally {
    await server.stop();
  }
}

const withServer = <T>(env: Record<string, string>, use: (address: string) => Promise<T>): Promise<T> =>
  withServerProcess(env, (server) => use(server.address));

async function memorySection(): Promise<void> {
  console.log(
    `\nOJS, memory store: ${JOBS.toLocaleString('en-US')} no-op jobs per run; ${SHAPE.workers} SDK workers x concurrency ${SHAPE.concurrency}`,
  );
  await withServer({}, async (address) => {
    for (const { mode, title } of MODES)
      console.log(`  ${title.padEnd(44)} ${load(await ojsThroughput(address, JOBS, `memory-${mode}`, mode))}`);
    console.log(`  ${'enqueue -> handler, idle SDK worker'.padEnd(44)} ${ms(await ojsLatency(address, SAMPLES, 'memory'))}`);
    console.log(`  ${'enqueue -> delivery, idle hand-written worker'.padEnd(44)} ${ms(await rawLatency(address, SAMPLES, 'memory'))}`);
    console.log(`  ${'unary round trip (Health/Check), the floor'.padEnd(44)} ${ms(await unaryRoundTrip(address, SAMPLES))}`);
  });
}

/** The environment of a server process on the Redis store at `port`. */
function redisEnv(port: number): Record<string, string> {
  return { OJS_BACKEND: 'redis', REDIS_URL: `redis://127.0.0.1:${port}` };
}

async function redisSection(): Promise<void> {
  const redis = await RedisServerProcess.start();
  const bullmq = (require('bullmq/package.json') as { version: string }).version;
  console.log(
    `\nRedis store vs BullMQ ${bullmq}, same redis-server: ${JOBS.toLocaleString('en-US')} no-op jobs per run; ${SHAPE.workers} workers x concurrency ${SHAPE.concurrency}`,
  );
  try {
    for (const { mode, title } of MODES) {
      resetRedisStats(redis.port);
      const ojs = await withServerProcess(redisEnv(redis.port), (server) =>
        cpuPerJob(JOBS, [server.pid, redis.pid!], () => ojsThroughput(server.address, JOBS, `redis-${mode}`, mode)),
      );
      const ojsCommands = redisCommandsExecuted(redis.port) / JOBS;
      resetRedisStats(redis.port);
      const bull = await cpuPerJob(JOBS, [redis.pid!], () => bullmqThroughput(redis.port, JOBS, `bullmq-${mode}`, mode));
      const bullCommands = redisCommandsExecuted(redis.port) / JOBS;
      const [ojsServer, ojsRedis] = ojs.others;
      console.log(`  ${title}`);
      console.log(`    OJS     ${load(ojs.result)}, ${ojsCommands.toFixed(1)} Redis commands/job`);
      console.log(`            CPU/job: clients ${us(ojs.self)}, server ${us(ojsServer!)}, Redis ${us(ojsRedis!)}`);
      console.log(`    BullMQ  ${load(bull.result)}, ${bullCommands.toFixed(1)} Redis commands/job`);
      console.log(`            CPU/job: clients ${us(bull.self)}, Redis ${us(bull.others[0]!)}`);
      console.log(`    ratio   ${(ojs.result.rate / bull.result.rate).toFixed(2)}x`);
    }
    const [ojsIdle, ojsRaw] = await withServer(redisEnv(redis.port), async (address) => [
      await ojsLatency(address, SAMPLES, 'redis'),
      await rawLatency(address, SAMPLES, 'redis'),
    ]);
    const bullIdle = await bullmqLatency(redis.port, SAMPLES, 'bullmq');
    console.log(`  enqueue -> handler, idle worker: OJS ${ms(ojsIdle)}; BullMQ ${ms(bullIdle)}`);
    console.log(`  enqueue -> delivery, idle hand-written OJS worker: ${ms(ojsRaw)}`);

    // Requests as clients send them (pipelined or scripted), counted on the wire through a proxy.
    const proxy = await CountingRedisProxy.start(redis.port);
    await withServer(redisEnv(proxy.port), (address) => ojsThroughput(address, ACCOUNTING_JOBS, 'redis-accounting', 'batched'));
    const ojsRequests = proxy.requests / ACCOUNTING_JOBS;
    proxy.requests = 0;
    await bullmqThroughput(proxy.port, ACCOUNTING_JOBS, 'bullmq-accounting', 'batched');
    const bullRequests = proxy.requests / ACCOUNTING_JOBS;
    proxy.close();
    console.log(
      `  Redis round trips per job (batched run, ${ACCOUNTING_JOBS.toLocaleString('en-US')} jobs): OJS ${ojsRequests.toFixed(2)}; BullMQ ${bullRequests.toFixed(2)}`,
    );
  } finally {
    await redis.destroy();
  }
}

/**
 * What the event log costs: batched throughput with the log on (the
 * default) and off (`--event-retention-count 0`), on each store, as the
 * median of alternating runs on fresh server processes.
 */
async function eventLogSection(): Promise<void> {
  const redis = await RedisServerProcess.start();
  console.log(`\nThe event log's cost: batched runs of ${JOBS.toLocaleString('en-US')} jobs, ${EVENT_LOG_RUNS} runs a side, medians`);
  try {
    const stores: [string, Record<string, string>][] = [
      ['memory', {}],
      ['Redis', redisEnv(redis.port)],
    ];
    for (const [store, env] of stores) {
      const rates = { on: [] as number[], off: [] as number[] };
      for (let run = 0; run < EVENT_LOG_RUNS; run++) {
        for (const side of ['on', 'off'] as const) {
          const sideEnv = side === 'on' ? env : { ...env, OJS_EVENT_RETENTION_COUNT: '0' };
          const result = await withServer(sideEnv, (address) =>
            ojsThroughput(address, JOBS, `events-${side}-${store.toLowerCase()}-${run}`, 'batched'),
          );
          rates[side].push(result.rate);
        }
      }
      const [on, off] = [percentiles(rates.on).p50, percentiles(rates.off).p50];
      console.log(`  ${store.padEnd(7)} events on ${rate(on)} off ${rate(off)} on/off ${(on / off).toFixed(2)}`);
    }
  } finally {
    await redis.destroy();
  }
}

/**
 * What uniqueness costs: the batched load with a unique policy on every job
 * (distinct keys, so each is checked and stored, none deduplicated, and each
 * key released when its job completes) against the same load without, on
 * each store, as the median of alternating runs on fresh server processes.
 */
async function uniqueSection(): Promise<void> {
  const redis = await RedisServerProcess.start();
  console.log(`\nUniqueness's cost: batched runs of ${JOBS.toLocaleString('en-US')} jobs, ${UNIQUE_RUNS} runs a side, medians`);
  try {
    const stores: [string, Record<string, string>][] = [
      ['memory', {}],
      ['Redis', redisEnv(redis.port)],
    ];
    for (const [store, env] of stores) {
      const runs = { unique: [] as OjsLoadResult[], plain: [] as OjsLoadResult[] };
      for (let run = 0; run < UNIQUE_RUNS; run++) {
        for (const side of ['unique', 'plain'] as const) {
          const extra = side === 'unique' ? UNIQUE_POLICY : {};
          const result = await withServer(env, (address) =>
            ojsThroughput(address, JOBS, `unique-${side}-${store.toLowerCase()}-${run}`, 'batched', extra),
          );
          runs[side].push(result);
        }
      }
      const median = (side: keyof typeof runs, of: (r: OjsLoadResult) => number) => percentiles(runs[side].map(of)).p50;
      for (const [what, of] of [
        ['end to end', (r: OjsLoadResult) => r.rate],
        ['enqueues  ', (r: OjsLoadResult) => r.enqueueRate],
      ] as const) {
        const [unique, plain] = [median('unique', of), median('plain', of)];
        console.log(`  ${store.padEnd(7)} ${what} unique ${rate(unique)} plain ${rate(plain)} unique/plain ${(unique / plain).toFixed(2)}`);
      }
    }
  } finally {
    await redis.destroy();
  }
}

async function main(): Promise<void> {
  const only = process.env['BENCH_ONLY'];
  if (only === undefined || only === 'memory') await memorySection();
  if (only === undefined || only === 'redis') await redisSection();
  if (only === undefined || only === 'events') await eventLogSection();
  if (only === undefined || only === 'unique') await uniqueSection();
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
