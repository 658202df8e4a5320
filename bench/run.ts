import { RedisServerProcess } from '../tools/redis-server';
import { ServerProcess } from '../tools/server-process';
import { BULLMQ_SHAPE, bullmqLatency, bullmqThroughput } from './bullmq-bench';
import { OJS_SHAPE, ojsLatency, ojsThroughput, unaryRoundTrip } from './ojs-bench';
import type { Percentiles } from './percentiles';
import { CountingRedisProxy, redisCommandsExecuted, resetRedisStats } from './redis-accounting';

/**
 * `npm run bench`: end-to-end throughput and enqueue-to-delivery latency of
 * this server on the in-memory store and on Redis, and of BullMQ on the same
 * redis-server in the same run. Servers run as their own processes; clients
 * and BullMQ run here. Every loop is bounded.
 */
const JOBS = Number(process.env['BENCH_JOBS'] ?? 100_000);
const SAMPLES = Number(process.env['BENCH_LATENCY_SAMPLES'] ?? 3_000);
const ACCOUNTING_JOBS = Math.min(JOBS, 20_000);

const ms = (p: Percentiles): string => `p50 ${p.p50.toFixed(2)} ms, p99 ${p.p99.toFixed(2)} ms`;
const rate = (n: number): string => `${Math.round(n).toLocaleString('en-US')} jobs/s`;

async function withServer<T>(env: Record<string, string>, use: (address: string) => Promise<T>): Promise<T> {
  const server = await ServerProcess.start(env);
  try {
    return await use(server.address);
  } finally {
    await server.stop();
  }
}

async function memorySection(): Promise<void> {
  const { latency, floor, throughput } = await withServer({}, async (address) => ({
    latency: await ojsLatency(address, SAMPLES, 'memory'),
    floor: await unaryRoundTrip(address, SAMPLES),
    throughput: await ojsThroughput(address, JOBS, 'memory'),
  }));
  console.log(`\nOJS, memory store (${JOBS.toLocaleString('en-US')} no-op jobs; ${OJS_SHAPE.producers} producers x batches of ${OJS_SHAPE.batch}; ${OJS_SHAPE.workers} workers x concurrency ${OJS_SHAPE.concurrency})`);
  console.log(`  throughput               ${rate(throughput)}`);
  console.log(`  enqueue -> delivery      ${ms(latency)} (idle worker, ${SAMPLES} samples)`);
  console.log(`  unary round trip         ${ms(floor)} (Health/Check: the transport's floor)`);
}

async function redisSection(): Promise<void> {
  const redis = await RedisServerProcess.start();
  const redisUrl = (port: number): Record<string, string> => ({ OJS_BACKEND: 'redis', REDIS_URL: `redis://127.0.0.1:${port}` });
  try {
    const ojs = await withServer(redisUrl(redis.port), async (address) => {
      const latency = await ojsLatency(address, SAMPLES, 'redis');
      resetRedisStats(redis.port);
      const throughput = await ojsThroughput(address, JOBS, 'redis');
      return { latency, throughput, commands: redisCommandsExecuted(redis.port) / JOBS };
    });
    const bullLatency = await bullmqLatency(redis.port, SAMPLES, 'bullmq');
    resetRedisStats(redis.port);
    const bullThroughput = await bullmqThroughput(redis.port, JOBS, 'bullmq');
    const bullCommands = redisCommandsExecuted(redis.port) / JOBS;

    // Requests as clients send them, counted on the wire through a proxy (a smaller run).
    const proxy = await CountingRedisProxy.start(redis.port);
    await withServer(redisUrl(proxy.port), (address) => ojsThroughput(address, ACCOUNTING_JOBS, 'redis-accounting'));
    const ojsRequests = proxy.requests / ACCOUNTING_JOBS;
    proxy.requests = 0;
    await bullmqThroughput(proxy.port, ACCOUNTING_JOBS, 'bullmq-accounting');
    const bullRequests = proxy.requests / ACCOUNTING_JOBS;
    proxy.close();

    console.log(`\nRedis store vs BullMQ ${require('bullmq/package.json').version} on the same redis-server (${JOBS.toLocaleString('en-US')} no-op jobs each)`);
    console.log(`  OJS throughput           ${rate(ojs.throughput)}  (${ojs.commands.toFixed(1)} Redis commands/job, ${ojsRequests.toFixed(2)} requests/job)`);
    console.log(`  BullMQ throughput        ${rate(bullThroughput)}  (${bullCommands.toFixed(1)} Redis commands/job, ${bullRequests.toFixed(2)} requests/job; concurrency ${BULLMQ_SHAPE.concurrency})`);
    console.log(`  throughput ratio         ${(ojs.throughput / bullThroughput).toFixed(2)}x`);
    console.log(`  OJS enqueue -> delivery  ${ms(ojs.latency)}`);
    console.log(`  BullMQ add -> processor  ${ms(bullLatency)} (await queue.add, idle worker)`);
  } finally {
    await redis.destroy();
  }
}

async function main(): Promise<void> {
  const only = process.env['BENCH_ONLY'];
  if (only !== 'redis') await memorySection();
  if (only !== 'memory') await redisSection();
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
