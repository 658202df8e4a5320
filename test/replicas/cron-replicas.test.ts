import { DEFAULT_EVENT_RETENTION } from '../../src/domain/retention';
import { JOB_STATES } from '../../src/domain/job';
import { JOB_SCAN_BUDGET, type JobQuery } from '../../src/domain/job-query';
import type { ScheduleSpec } from '../../src/domain/schedule';
import type { JobStore } from '../../src/store/job-store';
import { RedisJobStore } from '../../src/store/redis/redis-job-store';
import { RedisServerProcess } from '../../tools/redis-server';
import { seededRandom, seedFromEnv } from '../support/seeded-random';
import { eventuallyHolds } from '../support/waiting';
import { ReplicaSet } from './replica-set';

/**
 * Exactly one job per tick across replicas that die and restart: a
 * one-second schedule runs on three replicas while, one at a time, a
 * replica drawn from a seed (OJS_CRON_SEED replays it) is killed with
 * SIGKILL and restarted, each kill at a number of runs rather than at a
 * time. Two replicas are always up, so no tick may be missed; the store
 * claims each tick atomically, so none may be doubled.
 */

const SEED = seedFromEnv('OJS_CRON_SEED');
const KILLS = 4;
/** Runs between kills: a replica's restart takes about a second or two, so some ticks fire while it is down. */
const RUNS_PER_KILL = 3;
const SECOND = 1_000;

let redis: RedisServerProcess;
let set: ReplicaSet | undefined;
let store: JobStore | undefined;
beforeAll(async () => {
  redis = await RedisServerProcess.start();
});
afterAll(async () => {
  await store?.close();
  await set?.stopAll();
  await redis?.destroy();
});

it(`fires a one-second schedule once per tick while replicas are killed and restarted (seed ${SEED})`, async () => {
  const random = seededRandom(SEED);
  set = await ReplicaSet.start(3, { redisUrl: redis.url });
  const shared = await RedisJobStore.connect({ url: redis.url, prefix: set.prefix, events: DEFAULT_EVENT_RETENTION });
  store = shared;
  const spec: ScheduleSpec = {
    name: 'every-second',
    expression: '* * * * * *',
    timezone: 'UTC',
    template: { type: 'tick.record', args: [], queue: 'cron' },
    overlap: 'allow',
    missedTicks: 'run_once',
    description: '',
    isPaused: false,
  };
  const now = Date.now();
  await shared.registerSchedule({
    spec,
    nextRunAt: Math.floor(now / SECOND) * SECOND + SECOND,
    now,
  });
  const runs = async (): Promise<number> => (await shared.getSchedule(spec.name))?.runCount ?? 0;

  for (let kill = 1; kill <= KILLS; kill++) {
    await eventuallyHolds(runs, (n) => n >= kill * RUNS_PER_KILL, 10 * RUNS_PER_KILL * SECOND);
    const index = Math.floor(random() * 3);
    await set.kill(index);
    await set.restart(index);
  }
  await eventuallyHolds(runs, (n) => n >= (KILLS + 1) * RUNS_PER_KILL, 10 * RUNS_PER_KILL * SECOND);
  await shared.setSchedulePaused({ name: spec.name, paused: true, now: Date.now() });

  const query: JobQuery = {
    filter: { states: JOB_STATES, queue: 'cron' },
    order: 'oldest',
    limit: 1_000,
    maxBytes: 1e8,
    scanBudget: JOB_SCAN_BUDGET,
  };
  const ticks = (await shared.listJobs(query)).items
    .map((job) => {
      const at = job.meta['cron_triggered_at'];
      return typeof at === 'string' ? Date.parse(at) : Number.NaN;
    })
    .toSorted((a, b) => a - b);
  const first = ticks[0]!;
  const expected = Array.from({ length: ticks.at(-1)! / SECOND - first / SECOND + 1 }, (_, i) => first + i * SECOND);
  expect(ticks).toEqual(expected);
  const schedule = await shared.getSchedule(spec.name);
  expect(schedule?.runCount).toBe(ticks.length);
  const facts = (await shared.readFacts({ limit: 10_000 })).facts.filter(({ fact }) => fact.kind === 'schedule');
  expect(facts.map(({ fact }) => (fact.kind === 'schedule' ? fact.reason : 'other'))).toEqual(ticks.map(() => undefined));
}, 120_000);
