import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import { uuidv7 } from 'uuidv7';
import { sha256Hex } from '../lib/sha256';
import { BEAT_CALL_SPACING_MS } from '../src/app/beat-batcher';
import { buildJobs } from '../src/domain/job-submission';
import { DEFAULT_PAYLOAD_LIMITS, DELIVERY_BUDGET_BYTES } from '../src/domain/limits';
import { encodeJobFact } from '../src/store/redis/fact-codec';
import { encodeBody } from '../src/store/redis/job-codec';
import { RedisJobStore } from '../src/store/redis/redis-job-store';
import { transitionOf } from '../src/domain/transition';
import type { Job } from '../src/domain/job';
import { projectRoot } from '../src/project-root';
import type { RedisServerProcess } from '../tools/redis-server';
import { processCpuMicros } from './cpu-accounting';
import { COUNTED_BY_CALLGRIND, InstructionCounter } from './instruction-counter';
import { withRedis } from './servers';

/** Jobs per script call: the batched load's. */
const BATCH = 200;
/** Batches waiting before the measured rounds, as producers that outrun workers leave them. */
const BACKLOG_BATCHES = 100;
/** Workers taking turns: each acknowledges its previous claim, then claims again, so about 800 jobs stay active. */
const WORKERS = 4;

/** What one lifecycle does with the batches the driver hands it. */
interface Lifecycle {
  enqueue(jobs: readonly Job[]): Promise<unknown>;
  /** The claimed jobs' ids and lease tokens, at most `max`. */
  claim(workerId: string, max: number): Promise<{ id: string; token: string }[]>;
  /** How many of the leases' jobs it completed. */
  ack(workerId: string, leases: readonly { id: string; token: string }[]): Promise<number>;
}

/**
 * Redis time per job of each step (FCALL in INFO commandstats): per job
 * enqueued, claimed, and completed (the first rounds' claims are acknowledged
 * later, so fewer jobs are); and Redis's whole CPU per job enqueued (from /proc).
 */
export interface LifecycleCost {
  enqueue: number;
  claim: number;
  ack: number;
  /**
   * Of the three, the time of the Redis commands the functions ran (INFO
   * commandstats counts a script's commands too): the rest is Lua, and
   * carrying each command's arguments and reply between Lua and Redis.
   */
  commands: number;
  process: number;
  /** Jobs completed over the rounds (each round acknowledges a worker's previous claim). */
  completed: number;
}

/**
 * What Redis spends per job on the life of a job in batches of 200, with a
 * standing backlog and about 800 active jobs: OJS's functions, through the
 * store, beside the least functions with one record per job do
 * (bench/minimal-lifecycle.lua). Both on a redis-server of their own, fed
 * the same jobs. The gap is what OJS's features cost in Redis; the floor,
 * what any such design costs on this machine.
 */
export async function redisLifecycleCosts(rounds: number): Promise<{ ojs: LifecycleCost; minimal: LifecycleCost }> {
  const cost = (withLifecycle: WithLifecycle): Promise<LifecycleCost> =>
    withRedis((redis) =>
      withLifecycle(redis, (lifecycle) => timedDrive(redis, { rounds, batchSize: BATCH, backlogBatches: BACKLOG_BATCHES }, lifecycle)),
    );
  return { ojs: await cost(withOjsLifecycle), minimal: await cost(withMinimalLifecycle) };
}

/** Instructions Redis runs per job in each step (callgrind), per job as in LifecycleCost. */
export interface LifecycleInstructions {
  enqueue: number;
  claim: number;
  ack: number;
  completed: number;
}

/**
 * The same lifecycles as redisLifecycleCosts, with each redis-server run
 * under callgrind: the instructions each step runs per job, a count that is
 * the same on any machine, so that a change to the functions is measured
 * without the noise of CPU time. Batches of 200 after a backlog of 100
 * unless `shape` says otherwise (batches of one job show what a call costs
 * before its jobs do). Needs valgrind (InstructionCounter.isAvailable).
 */
export async function redisLifecycleInstructions(
  rounds: number,
  shape: Partial<Omit<DriveShape, 'rounds'>> = {},
): Promise<{ ojs: LifecycleInstructions; minimal: LifecycleInstructions }> {
  const driven = { rounds, batchSize: BATCH, backlogBatches: BACKLOG_BATCHES, ...shape };
  const count = (withLifecycle: WithLifecycle): Promise<LifecycleInstructions> =>
    withRedis((redis) => withLifecycle(redis, (lifecycle) => countedDrive(redis, driven, lifecycle)), {
      runUnder: COUNTED_BY_CALLGRIND,
    });
  return { ojs: await count(withOjsLifecycle), minimal: await count(withMinimalLifecycle) };
}

/** Sets up a lifecycle on `redis`, lends it to `use`, and tears it down. */
type WithLifecycle = <T>(redis: RedisServerProcess, use: (lifecycle: Lifecycle) => Promise<T>) => Promise<T>;

/** OJS's functions, through the store. */
async function withOjsLifecycle<T>(redis: RedisServerProcess, use: (lifecycle: Lifecycle) => Promise<T>): Promise<T> {
  const store = await RedisJobStore.connect({ url: redis.url, prefix: '{bench}' });
  try {
    for (let w = 0; w < WORKERS; w++) await store.registerWorker(worker(`w${w}`));
    return await use({
      enqueue: (jobs) => store.enqueue(jobs),
      claim: async (workerId, max) => {
        const claimed = await store.claim({
          workerId,
          queues: ['bench'],
          max,
          now: Date.now(),
          leaseNonce: uuidv7(),
          confirmWithinMs: 60_000,
          maxBytes: DELIVERY_BUDGET_BYTES,
        });
        return claimed.jobs.map((job) => ({ id: job.id, token: job.lease!.token }));
      },
      ack: async (workerId, leases) => {
        const items = leases.map(({ id, token }) => ({ jobId: id, leaseToken: token }));
        return (await store.ack({ workerId, now: Date.now(), items })).filter((outcome) => outcome.ok).length;
      },
    });
  } finally {
    await store.close();
  }
}

/** The least functions with one record per job (bench/minimal-lifecycle.lua). */
async function withMinimalLifecycle<T>(redis: RedisServerProcess, use: (lifecycle: Lifecycle) => Promise<T>): Promise<T> {
  const client = new Redis(redis.url);
  try {
    await client.call('function', 'load', readFileSync(join(projectRoot(), 'bench', 'minimal-lifecycle.lua'), 'utf8'));
    return await use({
      enqueue: (jobs) => {
        const args: (string | number)[] = [jobs.length];
        for (const job of jobs) args.push(job.id, encodeBody(job));
        args.push(jobs.map((job) => encodeJobFact(transitionOf(job, 'none', job.createdAt))).join('\x1e'));
        return client.call('fcall', 'minimal_enqueue', 1, '{bench}:', ...args);
      },
      claim: async (workerId, max) => {
        const nonce = uuidv7();
        const claimed = (await client.call('fcall', 'minimal_claim', 1, '{bench}:', Date.now(), workerId, max, nonce)) as [
          string,
          string,
          string,
        ][];
        return claimed.map(([id, attempt]) => ({ id, token: `${nonce}.${attempt}` }));
      },
      ack: async (workerId, leases) =>
        Number(
          await client.call(
            'fcall',
            'minimal_ack',
            1,
            '{bench}:',
            Date.now(),
            workerId,
            leases.length,
            ...leases.flatMap(({ id, token }) => [id, token]),
          ),
        ),
    });
  } finally {
    client.disconnect();
  }
}

/** Redis time per beat (FCALL in INFO commandstats), the commands' share of it, and Redis's whole CPU per beat. */
export interface BeatCost {
  call: number;
  commands: number;
  process: number;
}

/** Workers beating in turn, as the workers section's fleet, each every 5 s. */
const FLEET = 10_000;
const BEAT_INTERVAL_MS = 5_000;
/**
 * Beats per call: a replica with that fleet hears 2,000 beats a second,
 * and its batcher records those of each BEAT_CALL_SPACING_MS in one call.
 */
export const BEATS_PER_CALL = Math.round((FLEET / BEAT_INTERVAL_MS) * BEAT_CALL_SPACING_MS);

/**
 * What Redis spends per beat of a worker that holds no job (the fleet's
 * beats while no job flows): record-beat through the store, in batches of
 * BEATS_PER_CALL, the fleet's 10,000 workers (`fleet`) beating in turn, each beat
 * with its worker's next sequence; a beat refused fails the floor.
 */
export async function redisBeatCost(calls: number, fleet = FLEET): Promise<BeatCost> {
  return withRedis((redis) =>
    withBeatingFleet(redis, fleet, async (beatRound) => {
      const stats = new Redis(redis.url);
      try {
        const before = commandMicros(await stats.info('commandstats'));
        const cpuBefore = processCpuMicros(redis.pid!);
        for (let i = 0; i < calls; i++) await beatRound();
        const after = commandMicros(await stats.info('commandstats'));
        const beats = calls * BEATS_PER_CALL;
        return {
          call: (after.fcall - before.fcall) / beats,
          commands: (after.withinFunctions - before.withinFunctions) / beats,
          process: (processCpuMicros(redis.pid!) - cpuBefore) / beats,
        };
      } finally {
        stats.disconnect();
      }
    }),
  );
}

/** The beats of redisBeatCost, on a redis-server run under callgrind: instructions per beat. */
export async function redisBeatInstructions(calls: number, fleet = FLEET): Promise<number> {
  return withRedis(
    (redis) =>
      withBeatingFleet(redis, fleet, async (beatRound) => {
        const counter = new InstructionCounter(redis.pid!);
        await counter.start();
        await counter.zero();
        for (let i = 0; i < calls; i++) await beatRound();
        return (await counter.read()) / (calls * BEATS_PER_CALL);
      }),
    { runUnder: COUNTED_BY_CALLGRIND },
  );
}

/**
 * Registers the fleet's workers on `redis`, has every one beat once (its
 * first beat is no different, but the keys are warm), then lends `use` a
 * round of the next BEATS_PER_CALL beats.
 */
async function withBeatingFleet<T>(
  redis: RedisServerProcess,
  fleet: number,
  use: (beatRound: () => Promise<void>) => Promise<T>,
): Promise<T> {
  const store = await RedisJobStore.connect({ url: redis.url, prefix: '{bench}' });
  try {
    // Registered a hundred at a time: ten thousand calls one after another would take seconds for nothing.
    for (let w = 0; w < fleet; w += 100) {
      await Promise.all(Array.from({ length: Math.min(100, fleet - w) }, (_, i) => store.registerWorker(worker(`w${w + i}`))));
    }
    const running = { state: 'running' as const };
    let beat = 0;
    const beatRound = async (): Promise<void> => {
      const batch = Array.from({ length: BEATS_PER_CALL }, () => {
        const n = beat++;
        const sequence = Math.floor(n / fleet) + 1;
        return { workerId: `w${n % fleet}`, sequence, activeJobIds: [], now: Date.now(), expected: running, next: running };
      });
      const recorded = await store.recordBeats(batch);
      const refused = recorded.find((outcome) => outcome.result !== 'applied');
      if (refused !== undefined) throw new Error(`a beat of the floor was not applied: ${refused.result}`);
    };
    for (let call = 0; call < Math.ceil(fleet / BEATS_PER_CALL); call++) await beatRound();
    return await use(beatRound);
  } finally {
    await store.close();
  }
}

type Step = 'enqueue' | 'claim' | 'ack';

/** How a drive measures its steps: `begin` once the backlog is in, then around each step. */
interface StepMeter {
  begin(): Promise<void>;
  measure<T>(step: Step, run: () => Promise<T>): Promise<T>;
}

/** A drive measured by INFO commandstats (FCALL time, and the commands' within it) and the process's CPU. */
async function timedDrive(redis: RedisServerProcess, shape: DriveShape, lifecycle: Lifecycle): Promise<LifecycleCost> {
  const stats = new Redis(redis.url);
  try {
    const spent = { enqueue: 0, claim: 0, ack: 0, commands: 0 };
    let cpuBefore = 0;
    const { completed } = await drive(shape, lifecycle, {
      begin: async () => {
        cpuBefore = processCpuMicros(redis.pid!);
      },
      measure: async (step, run) => {
        const before = commandMicros(await stats.info('commandstats'));
        const result = await run();
        const after = commandMicros(await stats.info('commandstats'));
        spent[step] += after.fcall - before.fcall;
        spent.commands += after.withinFunctions - before.withinFunctions;
        return result;
      },
    });
    const jobs = shape.rounds * shape.batchSize;
    return {
      enqueue: spent.enqueue / jobs,
      claim: spent.claim / jobs,
      ack: spent.ack / completed,
      commands: spent.commands / jobs,
      process: (processCpuMicros(redis.pid!) - cpuBefore) / jobs,
      completed,
    };
  } finally {
    stats.disconnect();
  }
}

/** A drive on a redis-server run under callgrind, measured by the instructions each step runs. */
async function countedDrive(redis: RedisServerProcess, shape: DriveShape, lifecycle: Lifecycle): Promise<LifecycleInstructions> {
  const counter = new InstructionCounter(redis.pid!);
  const counted = { enqueue: 0, claim: 0, ack: 0 };
  const { completed } = await drive(shape, lifecycle, {
    begin: () => counter.start(),
    measure: async (step, run) => {
      await counter.zero();
      const result = await run();
      counted[step] += await counter.read();
      return result;
    },
  });
  const jobs = shape.rounds * shape.batchSize;
  return { enqueue: counted.enqueue / jobs, claim: counted.claim / jobs, ack: counted.ack / completed, completed };
}

/**
 * `count` jobs as the server builds them from the batched load's specs
 * (type bench.noop, args [n] from `first` on), with the server's defaults.
 */
export const benchJobs = (count: number, first: number): Job[] =>
  buildJobs(
    Array.from({ length: count }, (_, i) => ({ type: 'bench.noop', queue: 'bench', args: [first + i] })),
    {
      now: Date.now(),
      newId: uuidv7,
      digest: sha256Hex,
      defaults: { timeoutMs: 1_800_000, visibilityTimeoutMs: 1_800_000, gracePeriodMs: 30_000, heartbeatTimeoutMs: 60_000 },
      limits: DEFAULT_PAYLOAD_LIMITS,
      pending: false,
    },
  );

/** How a drive runs: `rounds` rounds of batches of `batchSize` jobs, after a backlog of `backlogBatches` batches. */
interface DriveShape {
  rounds: number;
  batchSize: number;
  backlogBatches: number;
}

/** Runs the backlog, then the rounds: enqueue, ack of a worker's previous claim, claim. */
async function drive(shape: DriveShape, lifecycle: Lifecycle, meter: StepMeter): Promise<{ completed: number }> {
  const { rounds, batchSize, backlogBatches } = shape;
  let n = 0;
  const batch = (): Job[] => {
    const jobs = benchJobs(batchSize, n);
    n += batchSize;
    return jobs;
  };
  for (let i = 0; i < backlogBatches; i++) await lifecycle.enqueue(batch());
  await meter.begin();
  const held = new Map<string, { id: string; token: string }[]>();
  let completed = 0;
  for (let round = 0; round < rounds; round++) {
    await meter.measure('enqueue', () => lifecycle.enqueue(batch()));
    const workerId = `w${round % WORKERS}`;
    const previous = held.get(workerId);
    if (previous !== undefined) completed += await meter.measure('ack', () => lifecycle.ack(workerId, previous));
    held.set(workerId, await meter.measure('claim', () => lifecycle.claim(workerId, batchSize)));
  }
  return { completed };
}

/** What runs during the rounds outside the functions: the calls themselves, the driver's INFO and the store's probe. */
const OUTSIDE_FUNCTIONS = new Set(['fcall', 'info', 'ping']);

/** From INFO commandstats: microseconds in FCALL, and in the commands run inside functions (every other one). */
function commandMicros(info: string): { fcall: number; withinFunctions: number } {
  let fcall = 0;
  let withinFunctions = 0;
  for (const [, name, usec] of info.matchAll(/^cmdstat_([^:]+):calls=\d+,usec=(\d+)/gm)) {
    if (name === 'fcall') fcall = Number(usec);
    else if (!OUTSIDE_FUNCTIONS.has(name!)) withinFunctions += Number(usec);
  }
  return { fcall, withinFunctions };
}

function worker(workerId: string) {
  const now = Date.now();
  return {
    workerId,
    hostname: 'bench',
    pid: 1,
    queues: ['bench'],
    concurrency: 10_000,
    labels: [],
    owner: '',
    registeredAt: now,
    state: 'running' as const,
    lastBeatAt: now,
    lastSequence: 0,
    reportedJobIds: [],
  };
}
