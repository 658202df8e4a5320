import { array, assert, asyncProperty, boolean, constantFrom, integer, option, record, string, type Arbitrary } from 'fast-check';
import { Redis } from 'ioredis';
import { JOB_STATES, TERMINAL_STATES, type Job, type JobState } from '../../src/domain/job';
import { availableListingKey, listingKey, listingTimeOf, runRank } from '../../src/domain/job-query';
import { canTransition, isTerminal } from '../../src/domain/job-state-machine';
import { PRIORITY_MAX, PRIORITY_MIN } from '../../src/domain/job-submission';
import { leaseProblem, leaseToken } from '../../src/domain/lease';
import { TIMESTAMP_MAX_MS } from '../../src/domain/limits';
import { leaseExpiry, softTimeoutAt, waitingDeadline } from '../../src/domain/timeouts';
import { NEXT_WORKER_STATES } from '../../src/domain/worker';
import { deadlineFields } from '../../src/store/redis/job-codec';
import { decodeTransition, encodeJobFact, factText } from '../../src/store/redis/fact-codec';
import type { JobTransition } from '../../src/domain/transition';
import { RedisKeys } from '../../src/store/redis/keys';
import { libraryDefinitions } from '../../src/store/redis/scripts';
import { propertyParameters } from '../support/property';
import { RedisServerProcess } from '../../tools/redis-server';
import { activeJob } from '../unit/support/active-job';
import { startRedisWithClient, stopRedisWithClient } from '../support/redis-with-client';

/**
 * The Lua mirrors of the domain's rules (lib/ojs.lua, and the tables
 * lib/domain.lua generates) agree with the TypeScript originals: each
 * helper runs through EVAL, after the same libraries every script starts
 * with, on inputs fast-check generates, and must answer what the domain
 * function answers. Runs are seeded: OJS_PROPERTY_SEED=<seed> replays the
 * seed a failure reports.
 */

const RUNS = propertyParameters(60);

let redis: RedisServerProcess;
let client: Redis;
let prelude: string;
beforeAll(async () => {
  ({ redis, client } = await startRedisWithClient());
  // The start of a call (lib/arguments.lua begin) with the settings alone, a deployment's key list and the
  // event log off: the helpers under test read no argument, and their bodies read the EVAL's ARGV themselves.
  const keyList = new RedisKeys('{lua-domain}')
    .scriptKeys()
    .map((key) => `'${key}'`)
    .join(', ');
  prelude = `${libraryDefinitions()}\nbegin(nil, { table.concat({ ${keyList} }, '\\31'), '0' })\n`;
});
afterAll(() => stopRedisWithClient({ redis, client }));

/** Runs `body` (Lua statements ending in a return) after the libraries, with `args` as ARGV. */
function evalLua(body: string, args: readonly (string | number)[]): Promise<unknown> {
  return client.call('eval', [`${prelude}\n${body}`, 0, ...args]);
}

const time = integer({ min: 0, max: TIMESTAMP_MAX_MS });
const duration = integer({ min: 0, max: 10 * 365 * 86_400_000 });
const optional = <T>(arbitrary: Arbitrary<T>): Arbitrary<T | undefined> => option(arbitrary, { nil: undefined });
const cases = <T>(arbitrary: Arbitrary<T>): Arbitrary<T[]> => array(arbitrary, { minLength: 1, maxLength: 40 });
const text = (n: number | undefined): string => (n === undefined ? '' : String(n));

/** A job with the timing fields the rules read. */
const timedJob: Arbitrary<Job> = record({
  createdAt: time,
  startDelay: duration,
  visibilityTimeoutMs: duration,
  heartbeatTimeoutMs: duration,
  timeoutMs: duration,
  gracePeriodMs: duration,
  totalTimeoutMs: optional(duration),
  enqueueTtlMs: optional(duration),
  expiresAt: optional(time),
  attempt: integer({ min: 0, max: 5 }),
}).map(({ startDelay, createdAt, ...fields }) => activeJob({ ...fields, createdAt }, createdAt + startDelay));

describe('the Lua mirrors of the domain rules', () => {
  it('compute leaseExpiry as the domain does', async () => {
    const input = record({ job: timedJob, renewDelay: duration, isConfirmed: boolean(), confirmWithinMs: duration });
    await assert(
      asyncProperty(cases(input), async (inputs) => {
        const args = inputs.flatMap(({ job, renewDelay, isConfirmed, confirmWithinMs }) => [
          job.visibilityTimeoutMs,
          job.heartbeatTimeoutMs,
          job.timeoutMs,
          job.gracePeriodMs,
          text(deadlineFields(job).totalAt),
          job.startedAt!,
          job.startedAt! + renewDelay,
          isConfirmed ? '' : confirmWithinMs,
        ]);
        const lua = await evalLua(
          `local out = {}
          for i = 1, #ARGV, 8 do
            out[#out + 1] = int(leaseExpiry(ARGV[i], ARGV[i + 1], ARGV[i + 2], ARGV[i + 3], ARGV[i + 4] ~= '' and ARGV[i + 4] or nil,
              ARGV[i + 5], tonumber(ARGV[i + 6]), ARGV[i + 7] ~= '' and tonumber(ARGV[i + 7]) or nil))
          end
          return out`,
          args,
        );
        const domain = inputs.map(({ job, renewDelay, isConfirmed, confirmWithinMs }) =>
          String(leaseExpiry(job, job.startedAt! + renewDelay, isConfirmed, confirmWithinMs)),
        );
        expect(lua).toEqual(domain);
      }),
      RUNS,
    );
  });

  it('compute waitingDeadline as the domain does', async () => {
    await assert(
      asyncProperty(cases(timedJob), async (jobs) => {
        const args = jobs.flatMap((job) => {
          const { discardAt, ttlAt } = deadlineFields(job);
          return [text(discardAt), text(ttlAt), job.attempt];
        });
        const lua = await evalLua(
          `local out = {}
          for i = 1, #ARGV, 3 do
            local deadline = waitingDeadline(ARGV[i] ~= '' and ARGV[i] or nil, ARGV[i + 1] ~= '' and ARGV[i + 1] or nil, ARGV[i + 2])
            out[#out + 1] = deadline and int(deadline) or ''
          end
          return out`,
          args,
        );
        expect(lua).toEqual(jobs.map((job) => text(waitingDeadline(job))));
      }),
      RUNS,
    );
  });

  it('compute softTimeoutAt as the domain does', async () => {
    await assert(
      asyncProperty(cases(timedJob), async (jobs) => {
        const args = jobs.flatMap((job) => [job.startedAt!, job.timeoutMs, text(deadlineFields(job).totalAt)]);
        const lua = await evalLua(
          `local out = {}
          for i = 1, #ARGV, 3 do
            out[#out + 1] = int(softTimeoutAt(ARGV[i], ARGV[i + 1], ARGV[i + 2] ~= '' and ARGV[i + 2] or nil))
          end
          return out`,
          args,
        );
        expect(lua).toEqual(jobs.map((job) => String(softTimeoutAt(job))));
      }),
      RUNS,
    );
  });

  it('find the lease problem the domain finds', async () => {
    const input = record({
      state: constantFrom(...JOB_STATES),
      lease: optional(record({ workerId: constantFrom('w1', 'w2'), token: constantFrom('n.1', 'n.2') })),
      workerId: constantFrom('w1', 'w2'),
      token: constantFrom('n.1', 'n.2'),
    });
    await assert(
      asyncProperty(cases(input), async (inputs) => {
        const args = inputs.flatMap(({ state, lease, workerId, token }) => [
          state,
          lease?.workerId ?? '',
          lease?.token ?? '',
          workerId,
          token,
        ]);
        const lua = await evalLua(
          `local out = {}
          for i = 1, #ARGV, 5 do
            local worker = ARGV[i + 1] ~= '' and ARGV[i + 1] or nil
            out[#out + 1] = leaseProblem(ARGV[i], worker, ARGV[i + 2], ARGV[i + 3], ARGV[i + 4]) or ''
          end
          return out`,
          args,
        );
        const domain = inputs.map(({ state, lease, workerId, token }) => {
          const job = activeJob({ state, lease: lease === undefined ? undefined : { ...activeJob().lease!, ...lease } });
          return leaseProblem(job, workerId, token) ?? '';
        });
        expect(lua).toEqual(domain);
      }),
      RUNS,
    );
  });

  it('make lease tokens the way the domain does', async () => {
    const input = record({ nonce: string({ minLength: 1, maxLength: 40 }), attempt: integer({ min: 1, max: 1_000_000 }) });
    await assert(
      asyncProperty(cases(input), async (inputs) => {
        const lua = await evalLua(
          `local out = {}
          for i = 1, #ARGV, 2 do out[#out + 1] = leaseToken(ARGV[i], tonumber(ARGV[i + 1])) end
          return out`,
          inputs.flatMap(({ nonce, attempt }) => [nonce, attempt]),
        );
        expect(lua).toEqual(inputs.map(({ nonce, attempt }) => leaseToken(nonce, attempt)));
      }),
      RUNS,
    );
  });

  it('order a ready queue by priority, highest first, then first in first out, scored by run rank and listed by it', async () => {
    // Sequences as the store hands them out: increasing, below the span the score reserves for them.
    const input = array(record({ priority: integer({ min: PRIORITY_MIN, max: PRIORITY_MAX }), gap: integer({ min: 1, max: 2 ** 36 }) }), {
      minLength: 1,
      maxLength: 40,
    });
    await assert(
      asyncProperty(input, async (entries) => {
        let seq = 0;
        const jobs = entries.map(({ priority, gap }, i) => ({ id: `j${i}`, priority, seq: (seq += gap) }));
        const domain = jobs.toSorted((a, b) => b.priority - a.priority || a.seq - b.seq);
        // Through a real sorted set, so Redis's own score arithmetic is part of what is checked.
        const lua = await evalLua(
          `local key = 'lua-domain-test:ready'
          redis.call('DEL', key)
          for i = 1, #ARGV, 3 do redis.call('ZADD', key, readyScoreOf(ARGV[i + 1], tonumber(ARGV[i + 2])), ARGV[i]) end
          local scored = redis.call('ZRANGE', key, 0, -1, 'WITHSCORES')
          redis.call('DEL', key)
          local order, keys = {}, {}
          for i = 1, #scored, 2 do
            order[#order + 1] = scored[i]
            keys[#keys + 1] = availableKey('q-1', tonumber(scored[i + 1]))
          end
          return { order, keys }`,
          jobs.flatMap((job) => [job.id, job.priority, job.seq]),
        );
        expect(lua).toEqual([domain.map((job) => job.id), domain.map((job) => availableListingKey('q-1', runRank(job.priority, job.seq)))]);
      }),
      RUNS,
    );
  });

  it('list jobs by the time and key the domain lists them by', async () => {
    const input = record({
      state: constantFrom(...JOB_STATES.filter((state) => state !== 'available')),
      createdAt: time,
      startedAt: optional(time),
      completedAt: optional(time),
      id: string({ minLength: 1, maxLength: 40 }),
    });
    await assert(
      asyncProperty(cases(input), async (inputs) => {
        const lua = await evalLua(
          `local out = {}
          for i = 1, #ARGV, 5 do
            local function given(value) return value ~= '' and value or nil end
            out[#out + 1] = listingKey(listingTime(ARGV[i], ARGV[i + 1], given(ARGV[i + 2]), given(ARGV[i + 3])), ARGV[i + 4])
          end
          return out`,
          inputs.flatMap(({ state, createdAt, startedAt, completedAt, id }) => [state, createdAt, text(startedAt), text(completedAt), id]),
        );
        expect(lua).toEqual(inputs.map((job) => listingKey(listingTimeOf(job), job.id)));
      }),
      RUNS,
    );
  });

  it('allow exactly the transitions of the state machine', async () => {
    const pairs = JOB_STATES.flatMap((from) => JOB_STATES.map((to): [JobState, JobState] => [from, to]));
    const lua = await evalLua(
      `local out = {}
      for i = 1, #ARGV, 2 do out[#out + 1] = NEXT_STATES[ARGV[i]][ARGV[i + 1]] and 1 or 0 end
      return out`,
      pairs.flat(),
    );
    expect(lua).toEqual(pairs.map(([from, to]) => (canTransition(from, to) ? 1 : 0)));
  });

  it('lay out the line of a job fact as the TypeScript encoder does, which the decoder reads back', async () => {
    const id = string({ minLength: 1, maxLength: 12, unit: constantFrom('a', 'b', '-', '7') });
    // Never empty: an empty field is an absent one.
    const freeText = string({ minLength: 1, maxLength: 12, unit: constantFrom('a', ' ', '%', '\x1e', '\x1f', 'é') });
    const transitions: Arbitrary<JobTransition> = record({
      at: time,
      jobId: id,
      jobType: id,
      queue: id,
      from: constantFrom('none' as const, ...JOB_STATES),
      to: constantFrom(...JOB_STATES),
      attempt: integer({ min: 0, max: 100 }),
      workerId: optional(id),
      priority: optional(integer({ min: PRIORITY_MIN, max: PRIORITY_MAX })),
      scheduledAt: optional(time),
      nextRetryAt: optional(time),
      maxAttempts: optional(integer({ min: 1, max: 100 })),
      startedAt: optional(time),
      enqueuedAt: optional(time),
      createdAt: optional(time),
      error: optional(record({ type: id, message: freeText })),
      deadLetter: optional(boolean()),
      reason: optional(freeText),
      actor: optional(freeText),
      traceparent: optional(freeText),
    }).map((t) => {
      // Absent, not undefined: as the decoder builds a transition.
      const fact = { ...t };
      for (const key of Object.keys(fact) as (keyof JobTransition)[]) if (fact[key] === undefined) delete fact[key];
      return fact;
    });
    await assert(
      asyncProperty(cases(transitions), async (facts) => {
        const args = facts.flatMap((t) => [
          t.jobId,
          t.jobType,
          t.queue,
          t.from,
          t.to,
          t.attempt,
          text(t.startedAt),
          text(t.enqueuedAt),
          t.traceparent === undefined ? '' : factText(t.traceparent),
          t.workerId ?? '',
          text(t.priority),
          text(t.scheduledAt),
          text(t.nextRetryAt),
          text(t.maxAttempts),
          text(t.createdAt),
          t.error === undefined ? '' : JSON.stringify(t.error),
          t.deadLetter === undefined ? '' : t.deadLetter ? '1' : '0',
          t.reason === undefined ? '' : factText(t.reason),
          t.actor === undefined ? '' : factText(t.actor),
          t.at,
        ]);
        const lua = await evalLua(
          `local out = {}
          for i = 1, #ARGV, 20 do
            local a = function(k) return ARGV[i + k] end
            out[#out + 1] = jobFactLine(a(19), a(0), a(1), a(2), a(3), a(4), a(5), a(9), a(10), a(11), a(12), a(13), a(6), a(7), a(14), a(15),
              a(16), a(17), a(18), a(8))
          end
          return out`,
          args,
        );
        expect(lua).toEqual(facts.map(encodeJobFact));
        expect(facts.map((t) => decodeTransition(encodeJobFact(t)))).toEqual(facts);
      }),
      RUNS,
    );
  });

  it('know the job states, which are terminal and which wait, and the worker states', async () => {
    const sets = await evalLua(
      `local function keys(set)
        local list = {}
        for key in pairs(set) do list[#list + 1] = key end
        table.sort(list)
        return list
      end
      return { JOB_STATES, TERMINAL_STATES, keys(TERMINAL), keys(WAITING), keys(WORKER_STATES), keys(IS_JOB_STATE) }`,
      [],
    );
    const waiting = JOB_STATES.filter((state) => state !== 'active' && !isTerminal(state));
    expect(sets).toEqual([
      [...JOB_STATES],
      [...TERMINAL_STATES],
      TERMINAL_STATES.toSorted(),
      waiting.toSorted(),
      Object.keys(NEXT_WORKER_STATES).toSorted(),
      JOB_STATES.toSorted(),
    ]);
  });
});
