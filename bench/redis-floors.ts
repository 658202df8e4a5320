import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import { uuidv7 } from 'uuidv7';
import { sha256Hex } from '../lib/sha256';
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
  /** The claimed jobs' ids and lease tokens. */
  claim(workerId: string): Promise<{ id: string; token: string }[]>;
  /** How many of the leases' jobs it completed. */
  ack(workerId: string, leases: readonly { id: string; token: string }[]): Promise<number>;
}

/** Redis time per job of each step (FCALL in INFO commandstats), and Redis's whole CPU per job (from /proc). */
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
  const ojs = await withRedis(async (redis) => {
    const store = await RedisJobStore.connect({ url: redis.url, prefix: '{bench}' });
    try {
      for (let w = 0; w < WORKERS; w++) await store.registerWorker(worker(`w${w}`));
      return await drive(redis, rounds, {
        enqueue: (jobs) => store.enqueue(jobs),
        claim: async (workerId) => {
          const claimed = await store.claim({
            workerId,
            queues: ['bench'],
            max: BATCH,
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
  });
  const minimal = await withRedis(async (redis) => {
    const client = new Redis(redis.url);
    try {
      await client.call('function', 'load', readFileSync(join(projectRoot(), 'bench', 'minimal-lifecycle.lua'), 'utf8'));
      return await drive(redis, rounds, {
        enqueue: (jobs) => {
          const args: (string | number)[] = [jobs.length];
          for (const job of jobs) args.push(job.id, encodeBody(job));
          args.push(jobs.map((job) => encodeJobFact(transitionOf(job, 'none', job.createdAt))).join('\x1e'));
          return client.call('fcall', 'minimal_enqueue', 1, '{bench}:', ...args);
        },
        claim: async (workerId) => {
          const nonce = uuidv7();
          const claimed = (await client.call('fcall', 'minimal_claim', 1, '{bench}:', Date.now(), workerId, BATCH, nonce)) as [
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
  });
  return { ojs, minimal };
}

/** Runs the backlog, then `rounds` rounds of enqueue, ack of a worker's previous claim, claim. */
async function drive(redis: RedisServerProcess, rounds: number, lifecycle: Lifecycle): Promise<LifecycleCost> {
  const stats = new Redis(redis.url);
  try {
    let n = 0;
    const batch = (): Job[] =>
      buildJobs(
        Array.from({ length: BATCH }, () => ({ type: 'bench.noop', queue: 'bench', args: [n++] })),
        {
          now: Date.now(),
          newId: uuidv7,
          digest: sha256Hex,
          defaults: { timeoutMs: 1_800_000, visibilityTimeoutMs: 1_800_000, gracePeriodMs: 30_000, heartbeatTimeoutMs: 60_000 },
          limits: DEFAULT_PAYLOAD_LIMITS,
          pending: false,
        },
      );
    for (let i = 0; i < BACKLOG_BATCHES; i++) await lifecycle.enqueue(batch());
    const spent = { enqueue: 0, claim: 0, ack: 0, commands: 0 };
    const timed = async <T>(step: 'enqueue' | 'claim' | 'ack', run: () => Promise<T>): Promise<T> => {
      const before = commandMicros(await stats.info('commandstats'));
      const result = await run();
      const after = commandMicros(await stats.info('commandstats'));
      spent[step] += after.fcall - before.fcall;
      spent.commands += after.withinFunctions - before.withinFunctions;
      return result;
    };
    const held = new Map<string, { id: string; token: string }[]>();
    let completed = 0;
    const cpuBefore = processCpuMicros(redis.pid!);
    for (let round = 0; round < rounds; round++) {
      await timed('enqueue', () => lifecycle.enqueue(batch()));
      const workerId = `w${round % WORKERS}`;
      const previous = held.get(workerId);
      if (previous !== undefined) completed += await timed('ack', () => lifecycle.ack(workerId, previous));
      held.set(workerId, await timed('claim', () => lifecycle.claim(workerId)));
    }
    const jobs = rounds * BATCH;
    return {
      enqueue: spent.enqueue / jobs,
      claim: spent.claim / jobs,
      ack: spent.ack / jobs,
      commands: spent.commands / jobs,
      process: (processCpuMicros(redis.pid!) - cpuBefore) / jobs,
      completed,
    };
  } finally {
    stats.disconnect();
  }
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
