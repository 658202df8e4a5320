import { Redis } from 'ioredis';
import { refusal } from '../support/refusal';
import { OjsError } from '../../src/domain/errors';
import { DEFAULT_EVENT_RETENTION } from '../../src/domain/retention';
import type { ScheduleSpec } from '../../src/domain/schedule';
import { MAX_BEATS_PER_CALL, type JobStore } from '../../src/store/job-store';
import { functionLibrary } from '../../src/store/redis/function-library';
import { KEY_LIST_SEPARATOR, RedisKeys } from '../../src/store/redis/keys';
import { RedisJobStore } from '../../src/store/redis/redis-job-store';
import { scriptPrologue } from '../../src/store/redis/script-runner';
import { ackScript } from '../../src/store/redis/scripts/ack';
import { claimScript } from '../../src/store/redis/scripts/claim';
import { enqueueScript } from '../../src/store/redis/scripts/enqueue';
import { failScript } from '../../src/store/redis/scripts/fail';
import { OUTCOME_FIELDS } from '../../src/store/redis/scripts/outcome-items';
import { recordBeatScript } from '../../src/store/redis/scripts/record-beat';
import { setQueueLimitsScript } from '../../src/store/redis/scripts/set-queue-limits';
import { RedisServerProcess, testPrefix } from '../../tools/redis-server';
import { StoreHarness, T0 } from './store-harness';
import { startRedisWithClient, stopRedisWithClient } from '../support/redis-with-client';

/**
 * What the Redis store promises beyond the contract, checked on the data
 * itself with a client of the test's own: a script refuses bad arguments
 * before its first write (Lua has no rollback), batches of any length pass,
 * the audit reports what a corrupting client did, a removal never gets
 * stuck on a zombie entry, Redis's own refusals are classified, and every
 * script call starts afresh although the function library stays loaded.
 */

let redis: RedisServerProcess;
let client: Redis;
beforeAll(async () => {
  ({ redis, client } = await startRedisWithClient());
});
afterAll(() => stopRedisWithClient({ redis, client }));

let prefix: string;
let keys: RedisKeys;
let store: JobStore;
let h: StoreHarness;
beforeEach(async () => {
  prefix = testPrefix();
  keys = new RedisKeys(prefix);
  store = await RedisJobStore.connect({ url: redis.url, prefix });
  h = new StoreHarness(store);
});
afterEach(async () => {
  h.close();
  await store.close();
});

/** Every key of the deployment with its type and contents, to compare before and after. */
async function snapshot(): Promise<Record<string, unknown>> {
  const found: string[] = [];
  for await (const batch of client.scanStream({ match: keys.scanPattern(), count: 1_000 })) {
    if (Array.isArray(batch)) for (const key of batch) found.push(String(key));
  }
  const data: Record<string, unknown> = {};
  for (const key of found.toSorted()) {
    const type = await client.type(key);
    if (type === 'hash') data[key] = await client.hgetall(key);
    else if (type === 'zset') data[key] = await client.zrange(key, 0, -1, 'WITHSCORES');
    else if (type === 'set') data[key] = (await client.smembers(key)).toSorted();
    else if (type === 'list') data[key] = await client.lrange(key, 0, -1);
    else if (type === 'stream') data[key] = await client.xrange(key, '-', '+');
    else data[key] = await client.get(key);
  }
  return data;
}

/** The settings the store under test runs its scripts with. */
const SETTINGS = { eventLogLength: DEFAULT_EVENT_RETENTION.maxCount };

/** Runs a script's function with raw arguments, as a buggy caller could, and returns Redis's error. */
async function runRaw(script: { name: string }, args: readonly (string | number)[]): Promise<Error> {
  const prologue = scriptPrologue(keys.scriptKeys(), SETTINGS);
  try {
    await client.call('fcall', [functionLibrary().functionOf(script.name), ...prologue, ...args]);
  } catch (error) {
    if (error instanceof Error) return error;
  }
  throw new Error(`${script.name} accepted its arguments`);
}

/** A worker holding four claimed jobs. */
async function busyWorker() {
  const worker = await h.register();
  await h.enqueue({}, {}, {}, {});
  const { jobs } = await h.claim(worker.workerId, ['default'], 4);
  return { worker, jobs };
}

describe('Redis scripts', () => {
  it('refuse a batch with one bad value before writing anything', async () => {
    const { worker, jobs } = await busyWorker();
    const before = await snapshot();
    const items = jobs.map((job) => ({
      jobId: job.id,
      leaseToken: job.lease!.token,
      outcome: h.outcome(job, { type: 'Boom', message: '' }, T0),
    }));
    const fail = failScript.encode({ workerId: worker.workerId, items, now: T0 }, SETTINGS);
    // The third item's retry time (after now, the worker id and the batch's count and stride), as NaN,
    // Infinity, an exponent, text or nothing: each refused.
    const retryAt = 4 + 2 * OUTCOME_FIELDS.length + OUTCOME_FIELDS.indexOf('nextRetryAt');
    expect(fail[retryAt]).toBe(T0 + 1_000);
    for (const bad of ['nan', 'inf', '-inf', '1e3', 'soon', '']) {
      const args = fail.with(retryAt, bad);
      expect((await runRaw(failScript, args)).message).toMatch(/^BADARG ARGV\[\d+\]/);
    }
    const enqueue = enqueueScript.encode([h.job(), h.job({ priority: 5 }), h.job()], SETTINGS);
    const priority = enqueue.indexOf(5);
    expect(priority).toBeGreaterThan(3 + 14);
    expect((await runRaw(enqueueScript, enqueue.with(priority, 'NaN'))).message).toMatch(/^BADARG/);
    expect((await runRaw(enqueueScript, enqueue.slice(0, -1))).message).toMatch(/^BADARG .* do not end at/);
    const ack = ackScript.encode(
      {
        workerId: worker.workerId,
        items: items.map(({ jobId, leaseToken }) => ({ jobId, leaseToken })),
        now: T0,
      },
      SETTINGS,
    );
    expect((await runRaw(ackScript, ack.with(3, 2))).message).toMatch(/^BADARG ARGV\[4\] is not the stride/);
    expect((await runRaw(ackScript, ack.with(0, 'Infinity'))).message).toMatch(/^BADARG ARGV\[1\]/);
    const claim = claimScript.encode(
      {
        workerId: worker.workerId,
        queues: ['default'],
        max: 1,
        now: T0,
        leaseNonce: 'n',
        confirmWithinMs: 1,
        maxBytes: 1,
      },
      SETTINGS,
    );
    expect((await runRaw(claimScript, claim.with(5, '-1'))).message).toMatch(/^BADARG ARGV\[6\]/);
    const goodBeat = {
      workerId: worker.workerId,
      sequence: 1,
      activeJobIds: jobs.map((job) => job.id),
      now: T0,
      expected: { state: 'running' as const },
      next: { state: 'running' as const },
    };
    // Two beats: the first would apply, the second is refused, so nothing of either is written.
    const beats = recordBeatScript.encode([goodBeat, { ...goodBeat, sequence: 2 }], SETTINGS);
    const secondNextState = 1 + (10 + jobs.length) + 5;
    expect(beats[secondNextState]).toBe('running');
    expect((await runRaw(recordBeatScript, beats.with(beats.length - 1, ''))).message).toMatch(/must not be empty/);
    expect((await runRaw(recordBeatScript, beats.with(secondNextState, 'asleep'))).message).toMatch(/is not allowed here/);
    expect((await runRaw(recordBeatScript, [...beats, 'extra'])).message).toMatch(/^BADARG 2 beats end at/);
    expect((await runRaw(recordBeatScript, beats.with(0, MAX_BEATS_PER_CALL + 1))).message).toMatch(/^BADARG ARGV\[1\]/);
    expect(() =>
      recordBeatScript.encode(
        Array.from({ length: MAX_BEATS_PER_CALL + 1 }, () => goodBeat),
        SETTINGS,
      ),
    ).toThrow(OjsError);
    // The most the port allows is what the script takes (beats of unknown workers write nothing).
    const gone = Array.from({ length: MAX_BEATS_PER_CALL }, (_, i) => ({ ...goodBeat, workerId: `gone-${i}` }));
    expect(await h.store.recordBeats(gone)).toEqual(gone.map(() => ({ result: 'not_found' })));
    expect(await snapshot()).toEqual(before);
  });

  it('are never handed NaN or Infinity: the encoders refuse first, and nothing is written', async () => {
    const { worker, jobs } = await busyWorker();
    const before = await snapshot();
    const items = jobs.map((job, i) => {
      const outcome = h.outcome(job, { type: 'Boom', message: '' }, T0);
      return {
        jobId: job.id,
        leaseToken: job.lease!.token,
        outcome: i === 2 && outcome.state === 'retryable' ? { ...outcome, nextRetryAt: Number.NaN } : outcome,
      };
    });
    expect(await refusal(store.fail({ workerId: worker.workerId, items, now: T0 }))).toMatchObject({ code: 'backend_error' });
    expect(await refusal(store.enqueue([h.job(), { ...h.job(), expiresAt: Number.POSITIVE_INFINITY }]))).toMatchObject({
      code: 'backend_error',
    });
    expect(await snapshot()).toEqual(before);
    // The worker can still settle its jobs and leave.
    const settled = await store.ack({
      workerId: worker.workerId,
      items: jobs.map((job) => ({ jobId: job.id, leaseToken: job.lease!.token })),
      now: T0,
    });
    expect(settled.every((outcome) => outcome.ok)).toBe(true);
    expect((await store.removeWorker({ workerId: worker.workerId, reason: 'deregistered', recoveries: [], now: T0 })).removed).toBe(true);
  });

  it('take batches of any length, passed as one array rather than spread into a call', async () => {
    const jobs = Array.from({ length: 8_600 }, () => h.job());
    await store.enqueue(jobs);
    expect((await store.listQueues({ limit: 10 })).items).toEqual([expect.objectContaining({ queue: 'default', available: 8_600 })]);
    const items = Array.from({ length: 42_000 }, (_, i) => ({ jobId: `missing-${i}`, leaseToken: 't' }));
    const outcomes = await store.ack({ workerId: 'w', items, now: T0 });
    expect(outcomes).toHaveLength(42_000);
    expect(outcomes.every((outcome) => !outcome.ok && (outcome.error as OjsError).code === 'not_found')).toBe(true);
    expect(await store.audit()).toEqual([]);
  }, 60_000);
});

describe('the Redis claim', () => {
  it('puts the entries it popped but did not claim back with their scores', async () => {
    const worker = await h.register();
    await h.enqueue({ args: ['x'.repeat(10_000)] }, { priority: 3 }, {}, { priority: -2 });
    const before = await client.zrange(`${keys.ready}default`, 0, -1, 'WITHSCORES');
    const { jobs } = await store.claim({
      workerId: worker.workerId,
      queues: ['default'],
      max: 4,
      now: T0,
      leaseNonce: 'n',
      confirmWithinMs: 1_000,
      maxBytes: 1,
    });
    expect(jobs).toHaveLength(1);
    expect(await client.zrange(`${keys.ready}default`, 0, -1, 'WITHSCORES')).toEqual(before.slice(2));
  });
});

describe('the Redis audit', () => {
  it('finds nothing wrong in data the store wrote', async () => {
    await busyWorker();
    await h.enqueue({ queue: 'later', scheduledAt: T0 + 60_000, expiresAt: T0 + 120_000 });
    expect(await store.audit()).toEqual([]);
  });

  it('reports what a client that bypassed the scripts broke', async () => {
    const { worker, jobs } = await busyWorker();
    const [waiting] = await h.enqueue({ queue: 'other', expiresAt: T0 + 60_000 });
    const [held] = jobs;
    await client.zrem(keys.expiries, waiting!.id);
    await client.hincrby(`${keys.counts}default`, 'active', 5);
    await client.zadd(keys.due, T0, 'ghost');
    await client.sadd(`${keys.held}${worker.workerId}`, waiting!.id);
    await client.zrem(keys.leases, held!.id);
    await client.set(`${prefix}:stray`, '1');
    await client.zadd(keys.queues, 0, 'empty');
    await client.zrem(keys.workerIds, worker.workerId);
    const problems = await store.audit();
    expect(problems).toEqual(
      expect.arrayContaining([
        `job ${waiting!.id} is waiting with a deadline but not in the expiries index`,
        'the counts of queue default say 9 active jobs, but it holds 4',
        'the due index lists job ghost, which does not exist',
        `worker ${worker.workerId} holds job ${waiting!.id}, which is not active under its lease (available)`,
        `job ${held!.id} is active but not in the leases index`,
        `key ${prefix}:stray belongs to no structure of the store`,
        'the queue index lists empty, which holds no jobs and is not paused',
        `worker ${worker.workerId} is not in the index of worker ids`,
      ]),
    );
    expect(problems).toHaveLength(8);
  });

  it('reports jobs whose index entries or worker went missing', async () => {
    const { worker, jobs } = await busyWorker();
    const [available] = await h.enqueue({});
    await client.zrem(`${keys.ready}default`, available!.id);
    await client.del(`${keys.worker}${worker.workerId}`);
    await client.zrem(keys.workers, worker.workerId);
    await client.zrem(keys.workerIds, worker.workerId);
    await client.hset(`${keys.job}${jobs[0]!.id}`, 'state', 'lost');
    const problems = await store.audit();
    expect(problems).toEqual(
      expect.arrayContaining([
        `job ${available!.id} is available but not in the ready set of its queue default`,
        `job ${jobs[1]!.id} is active under a lease of ${worker.workerId}, which is not a registered worker`,
        `job ${jobs[0]!.id} is in no known state (lost)`,
        `worker ${worker.workerId} is not registered but has a held set`,
      ]),
    );
  });
});

describe('the Redis audit of schedules', () => {
  it('reports schedules whose name or due entry went missing, and entries of schedules that are gone', async () => {
    const spec: Omit<ScheduleSpec, 'name'> = {
      expression: '* * * * * *',
      timezone: 'UTC',
      template: { type: 'report.generate', args: [] },
      overlap: 'skip',
      missedTicks: 'run_once',
      description: '',
      isPaused: false,
    };
    await store.registerSchedule({ spec: { ...spec, name: 'a' }, nextRunAt: T0 + 1_000, now: T0 });
    await store.registerSchedule({ spec: { ...spec, name: 'b' }, nextRunAt: T0 + 1_000, now: T0 });
    expect(await store.audit()).toEqual([]);
    await client.zrem(keys.schedules, 'a');
    await client.zadd(keys.scheduleDue, T0 + 5_000, 'b');
    await client.zadd(keys.scheduleDue, T0, 'ghost');
    await client.hset(`${keys.schedule}b`, 'paused', '1');
    expect(await store.audit()).toEqual(
      expect.arrayContaining([
        'schedule a is not in the schedule names at score 0',
        `schedule b is in the due index at ${T0 + 5_000}, not at its next run ${T0 + 1_000}`,
        'schedule b is paused but has a next run',
        'the due schedules list ghost, which is not stored',
      ]),
    );
    await client.del(`${keys.schedule}a`, `${keys.schedule}b`, keys.scheduleDue, keys.schedules);
  });
});

describe('the Redis rate-limit event sampling', () => {
  it('keeps its key through an episode, lets it expire after, and the audit reports a key out of shape', async () => {
    const [a, b] = [await h.register({ queues: ['q'] }), await h.register({ queues: ['q'] })];
    await store.setQueueLimits({ queue: 'q', limits: { maxActive: 1 }, now: T0 });
    const [job] = await h.enqueue({ queue: 'q' }, { queue: 'q' });
    const sampling = `${keys.rateLimitEvents}q`;
    const [first] = (await h.claim(a.workerId, ['q'], 10, T0)).jobs;
    expect(await client.hgetall(sampling)).toEqual({ quiet: String(T0 + 1_000), held: 'concurrency' });
    expect(await client.pttl(sampling)).toBe(-1);
    await store.ack({ workerId: a.workerId, items: [{ jobId: job!.id, leaseToken: first!.lease!.token }], now: T0 + 1 });
    expect((await h.claim(b.workerId, ['q'], 10, T0 + 1)).jobs).toHaveLength(1);
    expect(await client.hgetall(sampling)).toEqual({ quiet: String(T0 + 1_000) });
    // The rest of its window, and one more: at most two seconds here.
    expect(await client.pttl(sampling)).toBeGreaterThan(0);
    expect(await client.pttl(sampling)).toBeLessThanOrEqual(1_999);
    expect(await store.audit()).toEqual([]);
    await client.persist(sampling);
    await client.hset(`${keys.rateLimitEvents}ghost`, 'quiet', 'soon', 'held', 'rate', 'extra', '1');
    await client.pexpire(`${keys.rateLimitEvents}ghost`, 60_000);
    expect(await store.audit()).toEqual(
      expect.arrayContaining([
        'the rate-limit event sampling of queue q never expires',
        'queue ghost keeps rate-limit event sampling but has no limits',
        expect.stringMatching(/^the rate-limit event sampling of queue ghost is \{/),
        'the rate-limit event sampling of queue ghost expires during an episode',
      ]),
    );
    await client.del(sampling, `${keys.rateLimitEvents}ghost`);
  });

  it('is dropped with the limits, and setting limits refuses a bad time before writing anything', async () => {
    const worker = await h.register({ queues: ['q'] });
    await store.setQueueLimits({ queue: 'q', limits: { maxActive: 0 }, now: T0 });
    await h.enqueue({ queue: 'q' });
    expect((await h.claim(worker.workerId, ['q'], 10, T0)).jobs).toEqual([]);
    const before = await snapshot();
    expect(before[`${keys.rateLimitEvents}q`]).toEqual({ quiet: String(T0 + 1_000), held: 'concurrency' });
    const clear = setQueueLimitsScript.encode({ queue: 'q', now: T0 }, SETTINGS);
    expect((await runRaw(setQueueLimitsScript, clear.with(4, 'soon'))).message).toMatch(/^BADARG ARGV\[5\]/);
    expect(await snapshot()).toEqual(before);
    await store.setQueueLimits({ queue: 'q', now: T0 + 1 });
    expect(await client.exists(`${keys.rateLimitEvents}q`)).toBe(0);
  });
});

describe('Redis worker removal', () => {
  it('drops held entries of jobs the worker no longer holds instead of refusing forever', async () => {
    const { worker, jobs } = await busyWorker();
    const [other] = await h.enqueue({});
    // A zombie entry (a lost write, a bug): the job is not active under this worker's lease.
    await client.sadd(`${keys.held}${worker.workerId}`, other!.id, 'gone');
    const recoveries = jobs.map((job) => ({
      jobId: job.id,
      leaseToken: job.lease!.token,
      outcome: h.outcome(job, { type: 'worker_death', message: '' }, T0, true),
    }));
    const removal = await store.removeWorker({ workerId: worker.workerId, reason: 'deregistered', recoveries, now: T0 });
    expect(removal.removed).toBe(true);
    expect(removal.transitions).toHaveLength(4);
    expect(await store.getWorker(worker.workerId)).toBeUndefined();
    expect(await store.audit()).toEqual([]);
  });

  it('still refuses while a job the recoveries miss is really active under its lease', async () => {
    const { worker, jobs } = await busyWorker();
    const recoveries = jobs.slice(1).map((job) => ({
      jobId: job.id,
      leaseToken: job.lease!.token,
      outcome: h.outcome(job, { type: 'worker_death', message: '' }, T0, true),
    }));
    expect(await store.removeWorker({ workerId: worker.workerId, reason: 'deregistered', recoveries, now: T0 })).toEqual({
      removed: false,
      transitions: [],
    });
    // An item decided for an earlier lease of the job does not cover it either.
    const first = jobs[0]!;
    const stale = { jobId: first.id, leaseToken: `${first.lease!.token}-earlier`, outcome: recoveries[0]!.outcome };
    expect(
      await store.removeWorker({ workerId: worker.workerId, reason: 'deregistered', recoveries: [stale, ...recoveries], now: T0 }),
    ).toEqual({
      removed: false,
      transitions: [],
    });
    expect((await store.getWorker(worker.workerId))!.heldJobIds).toHaveLength(4);
    expect(await store.audit()).toEqual([]);
  });
});

describe('Redis queues', () => {
  it('leave no key behind once their last job is pruned, but the event log (bounded, with its last position) and the sequence', async () => {
    const [job] = await h.enqueue({ queue: 'brief' });
    await store.cancel(job!.id, T0);
    expect(await store.pruneTerminal(T0 + 1, { completedMs: 0, cancelledMs: 0, discardedMs: 0, maxJobs: 0 }, 10)).toBe(1);
    expect(Object.keys(await snapshot())).toEqual([keys.eventPosition, keys.events, keys.seq].toSorted());
  });
});

describe('Redis refusals', () => {
  it('answer a full Redis (maxmemory) with a retryable queue_full, and still answer reads', async () => {
    const [stored] = await h.enqueue({});
    await client.config('SET', 'maxmemory', '1');
    try {
      const full = await refusal(h.enqueue({}));
      expect(full).toMatchObject({ code: 'queue_full', retryable: true, metadata: { bound: 'redis_maxmemory' } });
      expect(full.cause).toBeInstanceOf(Error);
      // Read-only scripts are functions flagged no-writes, which Redis runs when full.
      expect((await store.getJob(stored!.id))?.id).toBe(stored!.id);
    } finally {
      await client.config('SET', 'maxmemory', '0');
    }
    await h.enqueue({});
  });

  it('answer a read-only Redis (a replica) with unavailable', async () => {
    await client.call('REPLICAOF', '127.0.0.1', '1');
    try {
      expect(await refusal(h.enqueue({}))).toMatchObject({ code: 'unavailable', retryable: true });
    } finally {
      await client.call('REPLICAOF', 'NO', 'ONE');
    }
  });
});

describe('Redis script calls', () => {
  /** The signals a call publishes, as its subscriber receives them. */
  async function signalsOf(call: () => Promise<unknown>): Promise<unknown[]> {
    const subscriber = client.duplicate();
    const messages: unknown[] = [];
    subscriber.on('message', (_channel: string, message: string) => messages.push(JSON.parse(message)));
    try {
      await subscriber.subscribe(keys.channel);
      await call();
      // Redis sends a connection's messages in order: those the call published come before this answer.
      await subscriber.ping();
      return messages;
    } finally {
      subscriber.disconnect();
    }
  }

  it('start afresh after a call refused halfway: the next one writes, records and publishes only its own', async () => {
    const { worker, jobs } = await busyWorker();
    const [job] = jobs;
    // A workflow link no script wrote: the ack is refused (CORRUPT) after it gathered writes, a fact and a signal.
    await client.hset(keys.job + job!.id, 'wf', 'no link');
    const refused = await refusal(
      store.ack({ workerId: worker.workerId, items: [{ jobId: job!.id, leaseToken: job!.lease!.token }], now: T0 }),
    );
    expect(refused.cause instanceof Error && refused.cause.message).toMatch(/^CORRUPT job link to a workflow/);
    const lastEntry = async () => (await client.xrevrange(keys.events, '+', '-', 'COUNT', 1))[0];
    const entryBefore = await lastEntry();

    const signals = await signalsOf(() => h.enqueue({ queue: 'second' }));
    expect(signals).toEqual([{ k: 'a', q: 'second', n: 1 }]);
    // The ack's pending writes never reached Redis: its job is still held, its lease still indexed.
    expect(await client.sismember(keys.held + worker.workerId, job!.id)).toBe(1);
    expect(await client.zscore(keys.leases, job!.id)).not.toBeNull();
    // The enqueue's entry of the event log holds its one fact.
    const entry = await lastEntry();
    expect(entry?.[0]).not.toBe(entryBefore?.[0]);
    expect(entry?.[0]).toMatch(/-1$/);
    expect(entry?.[1][1]).toContain('second');
  });

  it('refuse a key list that does not name every key, and keep the keys they had', async () => {
    await h.enqueue({});
    const before = await snapshot();
    const list = keys.scriptKeys();
    const enqueueFunction = functionLibrary().functionOf(enqueueScript.name);
    const jobArgs = enqueueScript.encode([h.job()], SETTINGS);
    for (const bad of [list.slice(1), [...list.slice(0, 5), '', ...list.slice(6)], [...list, `${prefix}:extra`]]) {
      const call = client.call('fcall', [enqueueFunction, 1, list[0]!, bad.join(KEY_LIST_SEPARATOR), SETTINGS.eventLogLength, ...jobArgs]);
      await expect(call).rejects.toThrow(/^BADARG settings: the key list does not hold 30 keys/);
    }
    expect(await snapshot()).toEqual(before);
    // A list of another deployment's keys in between, then this one's again: each call writes under its own keys.
    const other = new RedisKeys(testPrefix());
    await client.call('fcall', [enqueueFunction, 1, other.job, other.scriptKeys().join(KEY_LIST_SEPARATOR), 0, ...jobArgs]);
    await h.enqueue({});
    expect(await client.zcard(other.ready + 'default')).toBe(1);
    expect(await client.zcard(keys.ready + 'default')).toBe(2);
  });

  it('apply the settings and keys of their own deployment when several share one Redis', async () => {
    const quietPrefix = testPrefix();
    const quiet = await RedisJobStore.connect({ url: redis.url, prefix: quietPrefix, events: { maxCount: 0, maxAgeMs: 60_000 } });
    try {
      // Alternating: each call of a deployment follows one of the other.
      for (let round = 0; round < 2; round++) {
        await new StoreHarness(quiet).enqueue({});
        await h.enqueue({});
      }
      const quietKeys = new RedisKeys(quietPrefix);
      // The quiet deployment records nothing; this one records its two jobs.
      expect(await client.exists(quietKeys.events)).toBe(0);
      expect(await client.xlen(keys.events)).toBe(2);
      // Each draws its run sequence from its own counter.
      expect(await client.exists(quietKeys.seq, keys.seq)).toBe(2);
      expect(await client.zcard(keys.ready + 'default')).toBe(2);
    } finally {
      await quiet.close();
    }
  });

  it('load the function library again when Redis lost it (a restart without persistence, a flush)', async () => {
    await h.enqueue({});
    const library = functionLibrary();
    await client.call('function', 'flush');
    expect(await client.call('function', 'list', 'libraryname', library.name)).toEqual([]);
    // The calls that find it missing at the same time share one load.
    await client.config('RESETSTAT');
    await Promise.all([h.enqueue({}), h.enqueue({}), store.getJob('none')]);
    const stats = await client.info('commandstats');
    expect(/^cmdstat_function\|load:calls=(\d+),/m.exec(stats)?.[1]).toBe('1');
    expect(await client.call('function', 'list', 'libraryname', library.name)).toHaveLength(1);
    expect(await client.zcard(keys.ready + 'default')).toBe(3);
  });
});
