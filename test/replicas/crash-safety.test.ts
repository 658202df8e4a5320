import { pause } from '../../lib/pause';
import { randomUUID } from 'node:crypto';
import { ClientError, Status } from 'nice-grpc';
import { uuidv7 } from 'uuidv7';
import { JobState } from '../../gen/ojs/server/v1/job';
import type { QueueInfo } from '../../gen/ojs/server/v1/operator_service';
import { RedisServerProcess } from '../../tools/redis-server';
import { jobSpec } from '../support/jobs';
import { seededRandom, seedFromEnv } from '../support/seeded-random';
import { ReplicaSet } from './replica-set';
import { ResilientWorker } from './resilient-worker';
import { eventually, Progress } from '../support/waiting';

/**
 * No accepted job is lost: Enqueue answers only after Redis has the write.
 * Under a bounded load (producers enqueueing through every replica, workers
 * fetching and acknowledging through them), replicas are killed with
 * SIGKILL at random moments and restarted, and Redis itself (append-only,
 * fsync on every write) is killed with SIGKILL and restarted on its port
 * once, mid-load: a job acknowledged before that survives it only if it was
 * written before Enqueue answered. Every job whose Enqueue succeeded must
 * end completed within a few visibility timeouts of the chaos ending, and
 * no reservation may be left behind.
 *
 * The moments are drawn from a seed, logged and shown in the test name;
 * OJS_CRASH_SEED=<seed> replays the same schedule. A moment is a point in
 * the load's progress (jobs accepted plus jobs completed), not a time, so it
 * falls at the same stage of the run on a slow or a fast machine. What is in
 * flight at that instant still varies from run to run, and so may the
 * replica that dies when the drawn one is still restarting. When the test
 * ends, the store audit checks what the chaos left in Redis (stopAll).
 */

const SEED = seedFromEnv('OJS_CRASH_SEED');
const JOBS = 3_000;
const BATCH = 25;
const PRODUCERS = 3;
const REPLICA_KILLS = 6;
/** Visibility timeout of the replicas: what a job may stay active without a sign of life. */
const VISIBILITY_MS = 2_000;

/** Seeded progress points: replica kills (which replica, drawn too) spread over the run, and one Redis kill in its middle. */
function chaosSchedule(random: () => number, replicas: number) {
  const total = 2 * JOBS;
  const replicaKills = Array.from({ length: REPLICA_KILLS }, () => ({
    at: Math.floor(total * (0.05 + 0.85 * random())),
    index: Math.floor(random() * replicas),
  })).toSorted((a, b) => a.at - b.at);
  return { replicaKills, redisKillAt: Math.floor(total * (0.3 + 0.3 * random())) };
}

/**
 * A job may lose attempts to the chaos (its worker declared dead while
 * Redis was away, a reservation lapsing): it has plenty, retried at once.
 */
const RETRY = { maxAttempts: 25, initialInterval: 'PT0.1S', jitter: false };

describe('crash safety', () => {
  let redis: RedisServerProcess | undefined;
  let set: ReplicaSet | undefined;
  const workers: ResilientWorker[] = [];

  afterAll(async () => {
    await Promise.all(workers.map((w) => w.stop()));
    await set?.stopAll();
    await redis?.destroy();
  });

  it(`loses no accepted job when replicas and Redis are killed at random moments (seed ${SEED})`, async () => {
    console.log(`crash-safety seed ${SEED} (replay with OJS_CRASH_SEED=${SEED})`);
    const random = seededRandom(SEED);
    redis = await RedisServerProcess.start({ appendonly: true });
    const protocol = ['--heartbeat-interval', '200ms', '--heartbeat-timeout', '1s', '--visibility-timeout', `${VISIBILITY_MS}ms`];
    const loops = ['--promote-interval', '20ms', '--reap-interval', '50ms', '--stream-keepalive', '1s'];
    set = await ReplicaSet.start(3, { redisUrl: redis.url, args: [...protocol, ...loops] });
    const replicas = set;
    const queue = `crash-${randomUUID().slice(0, 8)}`;
    const progress = new Progress();
    let accepted: string[] = [];
    let completed = 0;
    /** Why enqueue attempts failed, by gRPC status (or error name): all should be UNAVAILABLE, none a hang. */
    const enqueueFailures = new Map<string, number>();
    const chaosLog: string[] = [];
    const units = (): number => accepted.length + completed;

    for (let i = 0; i < 3; i++) {
      const onAck = (): void => {
        completed += 1;
        progress.changed();
      };
      workers.push(new ResilientWorker(replicas, `crash-worker-${i}-${randomUUID().slice(0, 8)}`, queue, 50, onAck));
    }

    /**
     * Enqueues one batch with ids of its own, through live replicas in turn,
     * until one answers. A retry refused as ALREADY_EXISTS means an earlier
     * attempt was stored (a batch is stored whole or not at all): accepted.
     */
    async function enqueueBatch(batch: number): Promise<void> {
      // Client-chosen ids make a retry safe: a batch stored by an attempt that seemed to fail is refused as a duplicate.
      const jobs = Array.from({ length: BATCH }, () => jobSpec({ id: uuidv7(), queue, args: [batch], retry: RETRY }));
      for (let attempt = 0; attempt < 500; attempt++) {
        const live = replicas.live();
        const replica = live[(batch + attempt) % live.length]!;
        try {
          await replica.clients.jobs.enqueue({ jobs }, { signal: AbortSignal.timeout(5_000) });
        } catch (error) {
          if (!(error instanceof ClientError && error.code === Status.ALREADY_EXISTS)) {
            const why = error instanceof ClientError ? Status[error.code] : (error as Error).name;
            enqueueFailures.set(why, (enqueueFailures.get(why) ?? 0) + 1);
            await pause(20);
            continue;
          }
        }
        accepted = accepted.concat(jobs.map((j) => j.id));
        progress.changed();
        return;
      }
      throw new Error(`batch ${batch} was never accepted (seed ${SEED})`);
    }

    async function produce(producer: number): Promise<void> {
      for (let batch = producer; batch < JOBS / BATCH; batch += PRODUCERS) await enqueueBatch(batch);
    }

    const schedule = chaosSchedule(random, replicas.replicas.length);
    const reach = (at: number, what: string): Promise<boolean> =>
      progress.until(
        () => units() >= at,
        () => `progress ${at} for ${what}, got ${units()} (seed ${SEED})`,
        30_000,
      );

    /**
     * Kills replicas at their moments. A killed replica restarts in the
     * background while the load goes on (a restart takes a while, and the
     * next moment may come first). If the drawn replica is still down, the
     * next live one dies instead; the last live replica is never killed.
     */
    async function killReplicas(): Promise<void> {
      const restarts = new Map<number, Promise<unknown>>();
      const count = replicas.replicas.length;
      for (const kill of schedule.replicaKills) {
        await reach(kill.at, 'the next replica kill');
        while (replicas.live().length < 2) await Promise.race(restarts.values());
        const index = Array.from({ length: count }, (_, k) => (kill.index + k) % count).find((i) => replicas.at(i).process.isRunning)!;
        chaosLog.push(`replica ${index} at ${units()}`);
        await replicas.kill(index);
        restarts.set(
          index,
          replicas.restart(index).finally(() => restarts.delete(index)),
        );
      }
      await Promise.all(restarts.values());
    }

    /** Kills Redis once, mid-load, whatever the replicas are doing; it restarts from its append-only file. */
    async function killRedis(): Promise<void> {
      await reach(schedule.redisKillAt, 'the Redis kill');
      chaosLog.push(`redis at ${units()}`);
      await redis!.restart('SIGKILL');
    }

    await Promise.all([...Array.from({ length: PRODUCERS }, (_, p) => produce(p)), killReplicas(), killRedis()]);
    const endings = new Map<string, number>();
    for (const [why, n] of workers.flatMap((w) => [...w.endings])) endings.set(why, (endings.get(why) ?? 0) + n);
    console.log(
      `crash-safety seed ${SEED}: killed ${chaosLog.join(', ')}; failed enqueue attempts ` +
        `${JSON.stringify(Object.fromEntries(enqueueFailures))}; worker sessions ended ${JSON.stringify(Object.fromEntries(endings))}`,
    );
    // Failures said UNAVAILABLE (retry elsewhere) and nothing hung until a client gave up.
    expect([...enqueueFailures.keys()].filter((why) => why !== 'UNAVAILABLE')).toEqual([]);
    expect([...endings.keys()].filter((why) => why === 'AbortError' || why === 'TimeoutError')).toEqual([]);
    expect(accepted).toHaveLength(JOBS);

    // With the chaos over, every accepted job completes within a few
    // visibility timeouts: none is lost, none stays stuck in active.
    const observer = replicas.at(0).clients;
    let last: QueueInfo | undefined;
    const counts = await eventually(
      async () => {
        const { queues } = await observer.operator.listQueues({});
        last = queues.find((c) => c.name === queue);
        return last?.completed === JOBS ? last : undefined;
      },
      () => `all ${JOBS} jobs completed (seed ${SEED}); queue now: ${JSON.stringify(last)}`,
      { timeoutMs: 5 * VISIBILITY_MS, intervalMs: 100 },
    );
    expect(counts).toMatchObject({ completed: JOBS, active: 0, available: 0, retryable: 0, discarded: 0, scheduled: 0 });

    // Every accepted id, one by one: present and completed.
    const stateOf = async (jobId: string): Promise<string> => {
      try {
        return JobState[(await observer.jobs.getJob({ jobId })).job!.state];
      } catch (error) {
        if (error instanceof ClientError && error.code === Status.NOT_FOUND) return 'missing';
        throw error;
      }
    };
    const notCompleted: [string, string][] = [];
    for (let i = 0; i < accepted.length; i += 100) {
      const chunk = accepted.slice(i, i + 100);
      const states = await Promise.all(chunk.map(stateOf));
      states.forEach((state, k) => {
        if (state !== 'JOB_STATE_COMPLETED') notCompleted.push([chunk[k]!, state]);
      });
    }
    expect(notCompleted).toEqual([]);
    // No reservation is left behind in Redis either.
    expect(await redis.cli('ZCARD', `${replicas.prefix}:leases`)).toBe('0');
  }, 60_000);
});
