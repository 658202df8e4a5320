import { constants } from 'node:os';
import { bullmqLatency, bullmqThroughput } from './bullmq-bench';
import { bullmqChains } from './bullmq-flow-bench';
import { CHAIN_WAVES, type ChainResult } from './chain-clock';
import { ojsChains } from './ojs-chain-bench';
import type { JobSpec } from '../packages/sdk/src';
import { ojsLatency, ojsThroughput, rawLatency, unaryRoundTrip, type OjsLoadResult, type RawLatencyResult } from './ojs-bench';
import { percentiles } from './percentiles';
import { withoutPauses } from './own-pauses';
import { describePauses } from './gc-pauses';
import { cpuPerJob } from './cpu-accounting';
import { Phases } from './phases';
import { CountingRedisProxy, redisCommandsExecuted, resetRedisStats } from './redis-accounting';
import { assertServerBuilt, killLeftovers, redisEnv, SERVER_ROOT, withRedis, withServer, withServerProcess } from './servers';
import { SHAPE, type LoadMode, type LoadResult } from './shape';
import { FLEET, IDLE_MS, WORKERS_PER_CONNECTION, workersSection } from './workers-section';
import { count, ms, pct } from './format';
import { bareStreamsCost, bareUnaryCost, healthCheckCost, type CallCost, type StreamsCost } from './grpc-floors';
import { InstructionCounter } from './instruction-counter';
import { leastServerCost } from './least-server-floor';
import {
  BEATS_PER_CALL,
  redisBeatCost,
  redisBeatInstructions,
  redisLifecycleCosts,
  redisLifecycleInstructions,
  type LifecycleCost,
  type LifecycleInstructions,
} from './redis-floors';
import type { RedisServerProcess } from '../tools/redis-server';

/**
 * `npm run bench`: end-to-end throughput and enqueue-to-delivery latency of
 * this server on the in-memory store and on Redis, and of BullMQ on the same
 * redis-server in the same run. Servers run as their own processes; the SDK
 * clients and BullMQ run here. Every loop is bounded and every wait has a
 * deadline (BENCH_WAIT_MS): a phase that fails is reported and the others
 * still run; the exit code is 1 if any failed.
 */
const JOBS = Number(process.env['BENCH_JOBS'] ?? 100_000);
const SAMPLES = Number(process.env['BENCH_LATENCY_SAMPLES'] ?? 3_000);
const ACCOUNTING_JOBS = Math.min(JOBS, 20_000);
/** Chains of CHAIN_STEPS no-op steps per run of the workflow section: created 50 at a time under load, one at a time idle. */
const CHAINS = Number(process.env['BENCH_CHAINS'] ?? 2_000);
const IDLE_CHAINS = Math.max(1, Math.floor(CHAINS / 10));
const CHAIN_STEPS = 10;
/** Runs per side when the event log's cost is measured: on and off alternate, so drift in the machine hits both. */
const EVENT_LOG_RUNS = Number(process.env['BENCH_EVENT_LOG_RUNS'] ?? 3);
/** Runs per side when uniqueness's cost is measured, alternating in the same way. */
const UNIQUE_RUNS = Number(process.env['BENCH_UNIQUE_RUNS'] ?? 3);
/** A unique policy every job of the load can carry: its args differ, so no job is a duplicate of another. */
const UNIQUE_POLICY: Partial<JobSpec> = { unique: { keys: ['type', 'queue', 'args'], onConflict: 'reject' } };

const us = (n: number): string => `${n.toFixed(0)} µs`;
const rate = (n: number): string => `${Math.round(n).toLocaleString('en-US')} jobs/s`.padEnd(14);
const load = (r: LoadResult): string => `${rate(r.rate)} delivery under load ${ms(percentiles(r.delays))}`;
/**
 * The hand-written worker's latency; the same without the samples that a
 * pause of this process's collector fell in (this process is the worker
 * and the producer); and what it met on the way (refused Acks, a
 * re-registration), if anything.
 */
const raw = (r: RawLatencyResult): string => {
  const troubles = [
    ...(r.refusedAcks > 0 ? [`${r.refusedAcks} Ack(s) refused (lease lost)`] : []),
    ...(r.reRegistrations > 0 ? [`registered again ${r.reRegistrations}x (declared dead)`] : []),
  ];
  const line = `${ms(r)}; ${withoutPauses(r, "the benchmark's own")}`;
  return troubles.length === 0 ? line : `${line}; ${troubles.join(', ')}`;
};
const MODES: { mode: LoadMode; title: string }[] = [
  { mode: 'batched', title: `${SHAPE.producers} producers x batches of ${SHAPE.batch}` },
  { mode: 'single', title: `${SHAPE.singleProducers} producers awaiting one job per call` },
];

const phases = new Phases();
const print = (line: string): void => phases.print(line);

async function memorySection(): Promise<void> {
  print(
    `\nOJS, memory store: ${JOBS.toLocaleString('en-US')} no-op jobs per run; ${SHAPE.workers} SDK workers x concurrency ${SHAPE.concurrency}`,
  );
  await phases.run('memory store', () =>
    withServer({}, async (address) => {
      for (const { mode, title } of MODES)
        await phases.run(`memory ${mode}`, async () =>
          print(`  ${title.padEnd(44)} ${load(await ojsThroughput(address, JOBS, `memory-${mode}`, mode))}`),
        );
      await phases.run('memory idle SDK worker', async () =>
        print(`  ${'enqueue -> handler, idle SDK worker'.padEnd(44)} ${ms(await ojsLatency(address, SAMPLES, 'memory'))}`),
      );
      await phases.run('memory idle hand-written worker', async () =>
        print(`  ${'enqueue -> delivery, idle hand-written worker'.padEnd(44)} ${raw(await rawLatency(address, SAMPLES, 'memory'))}`),
      );
      await phases.run('memory unary round trip', async () =>
        print(`  ${'unary round trip (Health/Check), the floor'.padEnd(44)} ${ms(await unaryRoundTrip(address, SAMPLES))}`),
      );
    }),
  );
}

async function redisSection(): Promise<void> {
  const bullmq = (require('bullmq/package.json') as { version: string }).version;
  print(
    `\nRedis store vs BullMQ ${bullmq}, same redis-server: ${JOBS.toLocaleString('en-US')} no-op jobs per run; ${SHAPE.workers} workers x concurrency ${SHAPE.concurrency}`,
  );
  await phases.run('Redis store', () =>
    withRedis(async (redis) => {
      for (const { mode, title } of MODES) {
        print(`  ${title}`);
        let ojsRate: number | undefined;
        let bullRate: number | undefined;
        await phases.run(`Redis ${mode} OJS`, async () => {
          resetRedisStats(redis.port);
          const ojs = await withServerProcess(redisEnv(redis.port), (server) =>
            cpuPerJob(JOBS, [server.pid, redis.pid!], () => ojsThroughput(server.address, JOBS, `redis-${mode}`, mode)),
          );
          const ojsCommands = redisCommandsExecuted(redis.port) / JOBS;
          const [ojsServer, ojsRedis] = ojs.others;
          print(`    OJS     ${load(ojs.result)}, ${ojsCommands.toFixed(1)} Redis commands/job`);
          print(`            CPU/job: clients ${us(ojs.self)}, server ${us(ojsServer!)}, Redis ${us(ojsRedis!)}`);
          ojsRate = ojs.result.rate;
        });
        await phases.run(`Redis ${mode} BullMQ`, async () => {
          resetRedisStats(redis.port);
          const bull = await cpuPerJob(JOBS, [redis.pid!], () => bullmqThroughput(redis.port, JOBS, `bullmq-${mode}`, mode));
          const bullCommands = redisCommandsExecuted(redis.port) / JOBS;
          print(`    BullMQ  ${load(bull.result)}, ${bullCommands.toFixed(1)} Redis commands/job`);
          print(`            CPU/job: clients ${us(bull.self)}, Redis ${us(bull.others[0]!)}`);
          bullRate = bull.result.rate;
        });
        if (ojsRate !== undefined && bullRate !== undefined) print(`    ratio   ${(ojsRate / bullRate).toFixed(2)}x`);
        if (mode === 'batched') await leastServerFloor();
      }
      await phases.run('Redis idle OJS workers', () =>
        withServer(redisEnv(redis.port), async (address) => {
          await phases.run('Redis idle SDK worker', async () =>
            print(`  enqueue -> handler, idle worker: OJS ${ms(await ojsLatency(address, SAMPLES, 'redis'))}`),
          );
          await phases.run('Redis idle hand-written worker', async () =>
            print(`  enqueue -> delivery, idle hand-written OJS worker: ${raw(await rawLatency(address, SAMPLES, 'redis'))}`),
          );
        }),
      );
      await phases.run('Redis idle BullMQ worker', async () =>
        print(`  enqueue -> handler, idle worker: BullMQ ${ms(await bullmqLatency(redis.port, SAMPLES, 'bullmq'))}`),
      );
      await phases.run('Redis round trips', () => roundTrips(redis.port));
    }),
  );
}

/**
 * The batched load on the least server (bench/least-server.ts: grpc-js and
 * ioredis over the minimal lifecycle's functions, nothing of OJS) on a
 * redis-server of its own: the floor under each process's CPU per job above.
 */
async function leastServerFloor(): Promise<void> {
  await phases.run('Redis batched least server', async () => {
    const least = await leastServerCost(JOBS);
    print(`    least   ${rate(least.rate)} the least server, the floor: grpc-js and ioredis over the minimal lifecycle, nothing of OJS`);
    print(`            CPU/job: clients ${us(least.clientMicros)}, server ${us(least.serverMicros)}, Redis ${us(least.redisMicros)}`);
  });
}

/** Requests as clients send them (pipelined or scripted), counted on the wire through a proxy. */
async function roundTrips(redisPort: number): Promise<void> {
  const proxy = await CountingRedisProxy.start(redisPort);
  try {
    await withServer(redisEnv(proxy.port), (address) => ojsThroughput(address, ACCOUNTING_JOBS, 'redis-accounting', 'batched'));
    const ojsRequests = proxy.requests / ACCOUNTING_JOBS;
    proxy.requests = 0;
    await bullmqThroughput(proxy.port, ACCOUNTING_JOBS, 'bullmq-accounting', 'batched');
    const bullRequests = proxy.requests / ACCOUNTING_JOBS;
    print(
      `  Redis round trips per job (batched run, ${ACCOUNTING_JOBS.toLocaleString('en-US')} jobs): OJS ${ojsRequests.toFixed(2)}; BullMQ ${bullRequests.toFixed(2)}`,
    );
  } finally {
    proxy.close();
  }
}

/** The stores a cost is measured on: memory, and Redis on the section's redis-server. */
const storesOf = (redis: RedisServerProcess): [string, Record<string, string>][] => [
  ['memory', {}],
  ['Redis', redisEnv(redis.port)],
];

/**
 * What the event log costs: batched throughput with the log on (the
 * default) and off (`--event-retention-count 0`), on each store, as the
 * median of alternating runs on fresh server processes.
 */
async function eventLogSection(): Promise<void> {
  print(`\nThe event log's cost: batched runs of ${JOBS.toLocaleString('en-US')} jobs, ${EVENT_LOG_RUNS} runs a side, medians`);
  await phases.run('event log', () =>
    withRedis(async (redis) => {
      for (const [store, env] of storesOf(redis)) {
        await phases.run(`event log ${store}`, async () => {
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
          print(`  ${store.padEnd(7)} events on ${rate(on)} off ${rate(off)} on/off ${(on / off).toFixed(2)}`);
        });
      }
    }),
  );
}

/**
 * What uniqueness costs: the batched load with a unique policy on every job
 * (distinct keys, so each is checked and stored, none deduplicated, and each
 * key released when its job completes) against the same load without, on
 * each store, as the median of alternating runs on fresh server processes.
 */
async function uniqueSection(): Promise<void> {
  print(`\nUniqueness's cost: batched runs of ${JOBS.toLocaleString('en-US')} jobs, ${UNIQUE_RUNS} runs a side, medians`);
  await phases.run('uniqueness', () =>
    withRedis(async (redis) => {
      for (const [store, env] of storesOf(redis)) {
        await phases.run(`uniqueness ${store}`, async () => {
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
            print(`  ${store.padEnd(7)} ${what} unique ${rate(unique)} plain ${rate(plain)} unique/plain ${(unique / plain).toFixed(2)}`);
          }
        });
      }
    }),
  );
}

const chainFigure = (r: ChainResult): string => {
  const perSecond = `${Math.round(r.rate).toLocaleString('en-US')} chains/s`.padEnd(14);
  return `${perSecond} added per step ${ms(percentiles(r.stepGaps))}`;
};

/**
 * Workflows: chains of CHAIN_STEPS no-op steps, chains per second and the
 * time each step adds (from one step's handler returning to the next one's
 * starting), on each store, and BullMQ's flows (a chain as a tree of
 * parents) on the same redis-server.
 */
async function workflowSection(): Promise<void> {
  const waves = [
    { wave: CHAIN_WAVES.load, chains: CHAINS, title: `${CHAINS.toLocaleString('en-US')} chains, ${CHAIN_WAVES.load} created at a time` },
    { wave: CHAIN_WAVES.idle, chains: IDLE_CHAINS, title: `${IDLE_CHAINS.toLocaleString('en-US')} chains, one at a time (idle)` },
  ];
  print(`\nWorkflows: chains of ${CHAIN_STEPS} no-op steps; ${SHAPE.workers} workers x concurrency ${SHAPE.concurrency}`);
  await phases.run('workflows', () =>
    withRedis(async (redis) => {
      for (const { wave, chains, title } of waves) {
        print(`  ${title}`);
        for (const [store, env] of storesOf(redis)) {
          await phases.run(`workflows ${store} ${wave}`, async () => {
            const result = await withServer(env, (address) =>
              ojsChains(address, chains, CHAIN_STEPS, wave, `chains-${store.toLowerCase()}-${wave}`),
            );
            print(`    OJS ${store.padEnd(9)} ${chainFigure(result)}`);
          });
        }
        await phases.run(`workflows BullMQ ${wave}`, async () => {
          print(`    BullMQ flows  ${chainFigure(await bullmqChains(redis.port, chains, CHAIN_STEPS, wave, `bullmq-${wave}`))}`);
        });
      }
    }),
  );
}

const callCost = (c: CallCost): string =>
  `p50 ${c.p50.toFixed(3)} ms, p99 ${c.p99.toFixed(2)} ms; CPU per call: server ${us(c.serverMicros)}, client ${us(c.clientMicros)}`;
const streamsCost = (c: StreamsCost): string =>
  `${count(Math.round(c.answeredPerSecond))} messages answered a second: server ${pct(c.cpuShare)} of a core (${us(c.microsPerMessage)} a message); RSS ${(c.rssPerStreamBytes / 1024).toFixed(1)} KB per stream`;
const totalInstructions = (c: LifecycleInstructions): number => c.enqueue + c.claim + c.ack;
const lifecycleInstructions = (c: LifecycleInstructions): string =>
  `enqueue ${count(Math.round(c.enqueue))} + claim ${count(Math.round(c.claim))} + ack ${count(Math.round(c.ack))} = ${count(Math.round(totalInstructions(c)))}`;
const lifecycleCost = (c: LifecycleCost): string =>
  `enqueue ${c.enqueue.toFixed(1)} + claim ${c.claim.toFixed(1)} + ack ${c.ack.toFixed(1)} = ${(c.enqueue + c.claim + c.ack).toFixed(1)} µs, of which the commands they ran ${c.commands.toFixed(1)} µs (Redis process: ${c.process.toFixed(1)} µs)`;

/**
 * The floors under the figures: what a gRPC round trip costs with grpc-js
 * alone, beside the server's own simplest call; what a bare server spends
 * on the streams of the workers section's fleet, on grpc-js alone and
 * through nice-grpc, its collector's pauses among it, and on grpc-js alone
 * with a tenth of those streams; and what Redis spends per job on OJS's functions
 * beside the least functions with one record per job do
 * (bench/minimal-lifecycle.lua), in the batched load's batches, and per
 * beat; then the same Redis floors counted in instructions.
 */
async function floorsSection(): Promise<void> {
  print(`\nFloors on this machine`);
  print(`  gRPC unary round trip, back to back, ${count(SAMPLES)} calls (one at a time unless said)`);
  await phases.run('floors gRPC', async () => {
    print(`    grpc-js alone                ${callCost(await bareUnaryCost(SAMPLES))}`);
    // Each wake-up of the server finds many calls: against the line above, what waking up for each call costs.
    const busy = `grpc-js alone, ${UNARY_IN_FLIGHT} in flight`;
    print(`    ${busy.padEnd(29)}${callCost(await bareUnaryCost(SAMPLES, UNARY_IN_FLIGHT))}`);
    await withServerProcess({}, async (server) =>
      print(`    OJS server, Health/Check     ${callCost(await healthCheckCost(server.address, server.pid, SAMPLES))}`),
    );
  });
  // The worker fleet's streams (BENCH_ONLY=workers): a Fetch and a Beat stream per worker, beating at the server's default interval.
  const beatIntervalMs = 5_000;
  print(
    `  gRPC streams of ${count(FLEET)} workers: ${count(2 * FLEET)} bidirectional streams, ${WORKERS_PER_CONNECTION * 2} a connection, ${count(FLEET)} of them sending a message every ${beatIntervalMs / 1000} s that the server answers; CPU over ${IDLE_MS / 1000} s`,
  );
  for (const library of ['grpc-js', 'nice-grpc'] as const) {
    await phases.run(`floors gRPC streams, ${library}`, async () => {
      const cost = await bareStreamsCost(library, {
        streams: 2 * FLEET,
        beating: FLEET,
        intervalMs: beatIntervalMs,
        perConnection: 2 * WORKERS_PER_CONNECTION,
        windowMs: IDLE_MS,
      });
      print(`    ${(library === 'grpc-js' ? 'grpc-js alone' : 'nice-grpc, one layer').padEnd(29)}${streamsCost(cost)}`);
      print(`${' '.repeat(33)}its collector: ${describePauses(cost.gc, IDLE_MS / 1000)}`);
    });
  }
  // A young-generation pause grows with the streams a process holds, not only with what it allocates: a tenth of the streams, as many messages.
  const tenth = Math.max(1, Math.round(FLEET / 10));
  await phases.run('floors gRPC streams, a tenth', async () => {
    const cost = await bareStreamsCost('grpc-js', {
      streams: 2 * tenth,
      beating: tenth,
      intervalMs: beatIntervalMs / 10,
      perConnection: 2 * WORKERS_PER_CONNECTION,
      windowMs: IDLE_MS,
    });
    print(
      `    grpc-js alone, ${count(2 * tenth)} streams, ${count(tenth)} of them sending every ${beatIntervalMs / 10_000} s: ${streamsCost(cost)}`,
    );
    print(`${' '.repeat(33)}its collector: ${describePauses(cost.gc, IDLE_MS / 1000)}`);
  });
  const rounds = Math.max(1, Math.floor(JOBS / 200));
  print(
    `  Redis per job, batches of 200 with 20,000 jobs waiting and about 800 active, ${count(rounds * 200)} jobs (FCALL time in INFO commandstats)`,
  );
  await phases.run('floors Redis', async () => {
    const { ojs, minimal } = await redisLifecycleCosts(rounds);
    print(`    OJS functions                ${lifecycleCost(ojs)}`);
    print(`    minimal lifecycle            ${lifecycleCost(minimal)}`);
  });
  const beatCalls = Math.ceil((rounds * 200) / BEATS_PER_CALL);
  print(
    `  Redis per beat of a worker holding no job, batches of ${BEATS_PER_CALL} beats of 10,000 workers, ${count(beatCalls * BEATS_PER_CALL)} beats`,
  );
  await phases.run('floors Redis beats', async () => {
    const beat = await redisBeatCost(beatCalls);
    print(
      `    OJS record-beat              ${beat.call.toFixed(1)} µs, of which the commands it ran ${beat.commands.toFixed(1)} µs (Redis process: ${beat.process.toFixed(1)} µs)`,
    );
  });
  await redisInstructionFloors();
}

/** Calls under way at once in the floor whose server finds many calls at each wake-up. */
const UNARY_IN_FLIGHT = 100;

/** Jobs and beats counted under callgrind: a few thousand, since the count is the same on every run. */
const COUNTED_ROUNDS = 12;
const COUNTED_BEAT_CALLS = 40;
/** Rounds of one job a call: each call costs Redis as much as a batch's hundred jobs, and valgrind runs it slowly. */
const COUNTED_SINGLE_ROUNDS = 24;

/**
 * The Redis floors again as instructions (callgrind), the same count on any
 * machine: what a change to the functions saves, measured without the noise
 * of CPU time. Skipped where valgrind is not installed.
 */
async function redisInstructionFloors(): Promise<void> {
  if (!(await InstructionCounter.isAvailable())) {
    print(`  Redis instructions: skipped, valgrind is not installed (Debian: apt-get install valgrind)`);
    return;
  }
  print(
    `  Redis instructions (callgrind, the same count on any machine): per job of ${count(COUNTED_ROUNDS * 200)} as above, per beat of ${count(COUNTED_BEAT_CALLS * BEATS_PER_CALL)} as above, then per job of ${COUNTED_SINGLE_ROUNDS} enqueued, claimed and acknowledged one a call`,
  );
  await phases.run('floors Redis instructions', async () => {
    const { ojs, minimal } = await redisLifecycleInstructions(COUNTED_ROUNDS);
    print(`    OJS functions                ${lifecycleInstructions(ojs)}`);
    print(
      `    minimal lifecycle            ${lifecycleInstructions(minimal)} (OJS's: ${(totalInstructions(ojs) / totalInstructions(minimal)).toFixed(2)}x)`,
    );
    print(`    OJS record-beat              ${count(Math.round(await redisBeatInstructions(COUNTED_BEAT_CALLS)))} per beat`);
    const single = await redisLifecycleInstructions(COUNTED_SINGLE_ROUNDS, { batchSize: 1 });
    print(`    OJS functions, one job a call ${lifecycleInstructions(single.ojs)}`);
    print(
      `    minimal, one job a call      ${lifecycleInstructions(single.minimal)} (OJS's: ${(totalInstructions(single.ojs) / totalInstructions(single.minimal)).toFixed(2)}x)`,
    );
  });
}

/** BENCH_ONLY picks one section; the workers section (many minutes) runs only when picked. */
async function main(): Promise<void> {
  const only = process.env['BENCH_ONLY'];
  assertServerBuilt();
  if (SERVER_ROOT !== undefined) print(`The server measured: the build in ${SERVER_ROOT} (BENCH_SERVER_ROOT)`);
  if (only === undefined || only === 'memory') await memorySection();
  if (only === undefined || only === 'redis') await redisSection();
  if (only === undefined || only === 'events') await eventLogSection();
  if (only === undefined || only === 'unique') await uniqueSection();
  if (only === undefined || only === 'workflows') await workflowSection();
  if (only === undefined || only === 'floors') await floorsSection();
  if (only === 'workers') await workersSection(phases);
  print(phases.summary());
}

/**
 * Interrupted (Ctrl-C, or SIGTERM from whoever ran it): the processes the
 * run started, which a signal to this process alone would leave running
 * (redis-server, say), are killed by PID, and the run ends as the signal
 * would have ended it.
 */
async function interrupted(signal: 'SIGINT' | 'SIGTERM'): Promise<never> {
  console.error(`\n${signal}: stopping the processes this run started`);
  await killLeftovers();
  process.exit(128 + constants.signals[signal]);
}

/** Runs what BENCH_ONLY picks, then kills what a failed phase left running and exits at once (nothing left behind keeps the run alive). */
async function runAndExit(): Promise<never> {
  let code: number;
  try {
    await main();
    code = phases.exitCode;
  } catch (error) {
    console.error(error);
    code = 1;
  }
  await killLeftovers();
  process.exit(code);
}

process.once('SIGINT', () => void interrupted('SIGINT'));
process.once('SIGTERM', () => void interrupted('SIGTERM'));
void runAndExit();
