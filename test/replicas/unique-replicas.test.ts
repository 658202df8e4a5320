import { randomUUID } from 'node:crypto';
import { Status } from 'nice-grpc';
import { JobState, type Job } from '../../gen/ojs/server/v1/job';
import { jobSpec } from '../support/jobs';
import { rpcError, type RpcFailure } from '../support/rpc-error';
import { ReplicaSet, type Replica } from './replica-set';

/**
 * Unique jobs (ojs-unique-jobs) across three server processes on one Redis:
 * the check and the insert are one step in the enqueue script, so however
 * the concurrent enqueues of one key spread over the replicas, exactly one
 * job holds it. (dist/ must be fresh: `npm run build`, which `npm test` runs first.)
 */

const newQueue = (): string => `q-${randomUUID().slice(0, 8)}`;
/** Rounds, and concurrent enqueues of the round's key in each, spread evenly over the replicas. */
const ROUNDS = 20;
const CALLS_PER_ROUND = 30;

type Answer = { policy: 'reject' | 'ignore'; replica: string } & (
  { ok: true; job: Job; deduplicated: boolean } | { ok: false; failure: RpcFailure }
);

describe('unique jobs across replicas', () => {
  let set: ReplicaSet;

  beforeAll(async () => {
    set = await ReplicaSet.start(3, { redisUrl: process.env['OJS_TEST_REDIS_URL']! });
  });
  afterAll(() => set?.stopAll());

  /** One Enqueue of the round's job through `replica`, its answer or its failure. */
  async function enqueueThrough(replica: Replica, job: Job, policy: 'reject' | 'ignore'): Promise<Answer> {
    const request = { jobs: [{ ...job, unique: { ...job.unique!, onConflict: policy } }] };
    const call = replica.clients.jobs.enqueue(request);
    try {
      const { jobs, outcomes } = await call;
      return { policy, replica: replica.name, ok: true, job: jobs[0]!, deduplicated: outcomes[0]!.deduplicated };
    } catch {
      // The same settled call again, for its status and details.
      return { policy, replica: replica.name, ok: false, failure: await rpcError(call) };
    }
  }

  /** Every job of `type` in `queue`, through a replica none of the callers favoured. */
  async function jobsOfType(queue: string, type: string): Promise<Job[]> {
    const { jobs, nextPageToken } = await set.at(0).clients.operator.listJobs({ filter: { queue, type }, pageSize: 1000 });
    expect(nextPageToken).toBe('');
    return jobs;
  }

  it('creates exactly one job per key while reject and ignore enqueues race through three replicas', async () => {
    const queue = newQueue();
    for (let round = 0; round < ROUNDS; round++) {
      const type = `unique.race.r${round}`;
      const job = jobSpec({ type, queue, args: [{ round }], unique: { keys: ['type', 'queue', 'args'], period: 'PT1H' } });
      // Fired together, alternating replica and policy, so that every replica sees both policies in every round;
      // the first calls (the likeliest winners) reject in even rounds and ignore in odd ones.
      const policyOf = (i: number) => ((Math.floor(i / set.replicas.length) + round) % 2 === 0 ? 'reject' : 'ignore');
      const answers = await Promise.all(
        Array.from({ length: CALLS_PER_ROUND }, (_, i) => enqueueThrough(set.at(i % set.replicas.length), job, policyOf(i))),
      );

      const stored = await jobsOfType(queue, type);
      expect(stored.map((j) => j.state)).toEqual([JobState.JOB_STATE_AVAILABLE]);
      const winner = stored[0]!.id;
      const created = answers.filter((a) => a.ok && !a.deduplicated);
      expect(created.map((a) => a.ok && a.job.id)).toEqual([winner]);
      // Every other caller was told of the winner: ignore returns it, reject names it.
      const duplicate = { code: Status.ALREADY_EXISTS, reason: 'duplicate', metadata: { existing_job_id: winner } };
      const expected = answers.map((answer) =>
        answer === created[0]
          ? answer
          : answer.policy === 'ignore'
            ? { ok: true, deduplicated: true, job: { id: winner } }
            : { ok: false, failure: duplicate },
      );
      expect(answers).toMatchObject(expected);
    }
  });

  it('leaves exactly one live job per key while replace enqueues race through three replicas', async () => {
    const queue = newQueue();
    for (let round = 0; round < ROUNDS / 4; round++) {
      const type = `unique.replace.r${round}`;
      const job = jobSpec({ type, queue, unique: { keys: ['type', 'queue'], onConflict: 'replace' } });
      const responses = await Promise.all(
        Array.from({ length: CALLS_PER_ROUND / 3 }, (_, i) => set.at(i % set.replicas.length).clients.jobs.enqueue({ jobs: [job] })),
      );
      // Each call stored a job; all but the first replaced one, each a different one: a chain, not a fork.
      const createdIds = responses.map((r) => r.jobs[0]!.id);
      const replacedIds = responses.map((r) => r.outcomes[0]!.replacedJobId).filter((id) => id !== '');
      expect(new Set(createdIds).size).toBe(responses.length);
      expect(new Set(replacedIds).size).toBe(responses.length - 1);
      const live = createdIds.filter((id) => !replacedIds.includes(id));
      expect(live).toHaveLength(1);

      const stored = await jobsOfType(queue, type);
      expect(stored.filter((j) => j.state === JobState.JOB_STATE_AVAILABLE).map((j) => j.id)).toEqual(live);
      expect(
        stored
          .filter((j) => j.state === JobState.JOB_STATE_CANCELLED)
          .map((j) => j.id)
          .toSorted(),
      ).toEqual(replacedIds.toSorted());
    }
  });
});
