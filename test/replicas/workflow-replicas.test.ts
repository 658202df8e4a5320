import { pause } from '../../lib/pause';
import { randomUUID } from 'node:crypto';
import { ClientError, createClient, Status } from 'nice-grpc';
import { uuidv7 } from 'uuidv7';
import type { DeepPartial } from '../../gen/ojs/server/v1/job';
import type { Delivery } from '../../gen/ojs/server/v1/worker_service';
import {
  WorkflowServiceDefinition,
  WorkflowState as ProtoWorkflowState,
  WorkflowStepState,
  type Workflow,
  type WorkflowDefinition as WorkflowDefinitionMessage,
  type WorkflowElement as ProtoElement,
} from '../../gen/ojs/server/v1/workflow_service';
import { sha256Hex } from '../../lib/sha256';
import { DEFAULT_PAYLOAD_LIMITS } from '../../src/domain/limits';
import { assembleParentResults, type StoredResult } from '../../src/domain/parent-results';
import { createWorkflow } from '../../src/domain/workflow-creation';
import type { WorkflowDefinition, WorkflowElement } from '../../src/domain/workflow-definition';
import type { WorkflowPlan } from '../../src/domain/workflow-plan';
import { settleNode, type WorkflowRun } from '../../src/domain/workflow-run';
import { isTerminalWorkflowState } from '../../src/domain/workflow-state-machine';
import { workflowView, type StepState } from '../../src/domain/workflow-view';
import { RedisServerProcess } from '../../tools/redis-server';
import { seededRandom, seedFromEnv } from '../support/seeded-random';
import { eventually, Progress } from '../support/waiting';
import { ReplicaSet, type Replica } from './replica-set';
import { ResilientWorker, type HandlerOutcome } from './resilient-worker';

/**
 * Workflows advance atomically with the settlements that cause them:
 * random nested workflows (chains, groups and batches of jobs, some of
 * which fail for good) run on three replicas while replicas are killed
 * with SIGKILL at seeded points of the load's progress and restarted.
 * Every workflow must end in the state its jobs' outcomes imply (the
 * domain's rules applied to the same outcomes), every step must end as
 * they imply, each job that ran must have received the parent_results
 * its dependencies' results make, and no job may have run more often than
 * its attempts show: a job run again because its attempt was reclaimed
 * (its worker was cut off while a replica died) is counted, with the
 * server's error that says why, never hidden. OJS_WORKFLOW_SEED replays
 * a run.
 */

const SEED = seedFromEnv('OJS_WORKFLOW_SEED');
const WORKFLOWS = 60;
const REPLICA_KILLS = 5;
const VISIBILITY_MS = 2_000;
/** Reclaimed attempts are retried at once and often; a failing job fails for good at its first answer. */
const RETRY = { maxAttempts: 25, initialInterval: 'PT0.1S', jitter: false, nonRetryableErrors: ['wf.fatal'] };

/** A workflow as the test draws it, with its jobs' ids chosen here (so a creation retried after a crash is recognised). */
type Tree =
  | { kind: 'job'; type: 'wf.ok' | 'wf.fail'; id: string }
  | { kind: 'chain'; steps: Tree[] }
  | { kind: 'group'; jobs: Tree[] }
  | {
      kind: 'batch';
      jobs: Tree[];
      callbacks: { onComplete?: Tree & { kind: 'job' }; onSuccess?: Tree & { kind: 'job' }; onFailure?: Tree & { kind: 'job' } };
    };

function drawTree(random: () => number, depth: number): Tree {
  const leaf = (): Tree & { kind: 'job' } => ({ kind: 'job', type: random() < 0.15 ? 'wf.fail' : 'wf.ok', id: uuidv7() });
  const elements = (n: number): Tree[] =>
    Array.from({ length: n }, () => (depth < 3 && random() < 0.3 ? drawTree(random, depth + 1) : leaf()));
  const pick = random();
  if (pick < 0.4) return { kind: 'chain', steps: elements(2 + Math.floor(random() * 3)) };
  if (pick < 0.7) return { kind: 'group', jobs: elements(2 + Math.floor(random() * 2)) };
  const callbacks: Extract<Tree, { kind: 'batch' }>['callbacks'] = {};
  if (random() < 0.7) callbacks.onComplete = leaf();
  if (random() < 0.7) callbacks.onSuccess = leaf();
  if (random() < 0.7 || (callbacks.onComplete === undefined && callbacks.onSuccess === undefined)) callbacks.onFailure = leaf();
  return { kind: 'batch', jobs: elements(2 + Math.floor(random() * 2)), callbacks };
}

const jobOf = (tree: Tree & { kind: 'job' }, queue: string) => ({ id: tree.id, type: tree.type, queue, args: [], retry: RETRY });

function toProto(tree: Tree, queue: string): DeepPartial<ProtoElement> {
  switch (tree.kind) {
    case 'job':
      return { kind: { $case: 'job', value: jobOf(tree, queue) } };
    case 'chain':
      return { kind: { $case: 'chain', value: { steps: tree.steps.map((t) => toProto(t, queue)) } } };
    case 'group':
      return { kind: { $case: 'group', value: { jobs: tree.jobs.map((t) => toProto(t, queue)) } } };
    case 'batch': {
      const { onComplete, onSuccess, onFailure } = tree.callbacks;
      const callbacks = {
        ...(onComplete === undefined ? {} : { onComplete: jobOf(onComplete, queue) }),
        ...(onSuccess === undefined ? {} : { onSuccess: jobOf(onSuccess, queue) }),
        ...(onFailure === undefined ? {} : { onFailure: jobOf(onFailure, queue) }),
      };
      return { kind: { $case: 'batch', value: { jobs: tree.jobs.map((t) => toProto(t, queue)), callbacks } } };
    }
  }
}

function toDomain(tree: Tree, queue: string): WorkflowElement {
  switch (tree.kind) {
    case 'job':
      return { kind: 'job', job: { id: tree.id, type: tree.type, queue, args: [] } };
    case 'chain':
      return { kind: 'chain', steps: tree.steps.map((t) => toDomain(t, queue)) };
    case 'group':
      return { kind: 'group', jobs: tree.jobs.map((t) => toDomain(t, queue)) };
    case 'batch': {
      const submission = (job: (Tree & { kind: 'job' }) | undefined) =>
        job === undefined ? undefined : { id: job.id, type: job.type, queue, args: [] };
      const { onComplete, onSuccess, onFailure } = tree.callbacks;
      return {
        kind: 'batch',
        jobs: tree.jobs.map((t) => toDomain(t, queue)),
        callbacks: { onComplete: submission(onComplete), onSuccess: submission(onSuccess), onFailure: submission(onFailure) },
      };
    }
  }
}

/** The handlers' answers: a job's result names it; a wf.fail job fails for good. */
function handle(delivery: Delivery): HandlerOutcome {
  const job = delivery.job!;
  return job.type === 'wf.fail'
    ? { ok: false, error: { type: 'wf.fatal', message: 'fails on purpose' } }
    : { ok: true, result: { job: job.id } };
}

/**
 * What the domain says the workflow becomes when each job that runs has the
 * outcome its type gives: its run, and the result each succeeded job stored.
 */
function expectedRun(definition: WorkflowDefinition): {
  plan: WorkflowPlan;
  run: WorkflowRun;
  /** The id the test chose for each job node's job. */
  jobIds: string[];
  results: Map<number, StoredResult>;
} {
  const {
    plan,
    run: initial,
    jobs,
  } = createWorkflow(definition, {
    now: 0,
    newId: () => uuidv7(),
    digest: sha256Hex,
    defaults: { timeoutMs: 60_000, visibilityTimeoutMs: 60_000, gracePeriodMs: 0, heartbeatTimeoutMs: 60_000 },
    limits: DEFAULT_PAYLOAD_LIMITS,
    pending: false,
  });
  const results = new Map<number, StoredResult>();
  let run = initial;
  for (let settled = true; settled && !isTerminalWorkflowState(run.progress.state);) {
    settled = false;
    const next = run.nodes.findIndex((node, i) => node.status === 'enqueued' && i < plan.jobCount);
    if (next < 0) break;
    const type = plan.nodes[next]!.type;
    if (type === 'wf.ok') {
      const json = JSON.stringify({ job: jobs[next]!.id });
      results.set(next, { json, bytes: Buffer.byteLength(json) });
    }
    run = settleNode(plan, run, next, type === 'wf.ok' ? 'succeeded' : 'failed', 0).run;
    settled = true;
  }
  return { plan, run, jobIds: jobs.map((job) => job.id), results };
}

const STEP_STATES: Readonly<Record<StepState, WorkflowStepState>> = {
  waiting: WorkflowStepState.WORKFLOW_STEP_STATE_WAITING,
  pending: WorkflowStepState.WORKFLOW_STEP_STATE_PENDING,
  active: WorkflowStepState.WORKFLOW_STEP_STATE_ACTIVE,
  completed: WorkflowStepState.WORKFLOW_STEP_STATE_COMPLETED,
  failed: WorkflowStepState.WORKFLOW_STEP_STATE_FAILED,
  cancelled: WorkflowStepState.WORKFLOW_STEP_STATE_CANCELLED,
};
const WORKFLOW_STATES = {
  completed: ProtoWorkflowState.WORKFLOW_STATE_COMPLETED,
  failed: ProtoWorkflowState.WORKFLOW_STATE_FAILED,
} as const;

describe('workflows across replicas', () => {
  let redis: RedisServerProcess | undefined;
  let set: ReplicaSet | undefined;
  const workers: ResilientWorker[] = [];

  afterAll(async () => {
    await Promise.all(workers.map((w) => w.stop()));
    await set?.stopAll();
    await redis?.destroy();
  });

  it(`advances every workflow exactly as its jobs imply while replicas are killed (seed ${SEED})`, async () => {
    console.log(`workflow-replicas seed ${SEED} (replay with OJS_WORKFLOW_SEED=${SEED})`);
    const random = seededRandom(SEED);
    redis = await RedisServerProcess.start();
    const protocol = ['--heartbeat-interval', '200ms', '--heartbeat-timeout', '1s', '--visibility-timeout', `${VISIBILITY_MS}ms`];
    const loops = ['--promote-interval', '20ms', '--reap-interval', '50ms', '--stream-keepalive', '1s'];
    set = await ReplicaSet.start(3, { redisUrl: redis.url, args: [...protocol, ...loops] });
    const replicas = set;
    const queue = `wf-${randomUUID().slice(0, 8)}`;
    const trees = Array.from({ length: WORKFLOWS }, () => drawTree(random, 1));
    const definitions = trees.map((tree) => toDomain(tree, queue) as WorkflowDefinition);
    const workflowIds: string[] = [];
    const progress = new Progress();
    let answers = 0;
    /** Every delivery any worker received, by job id. */
    const deliveries = new Map<string, Delivery[]>();
    const record = (delivery: Delivery): HandlerOutcome => {
      const id = delivery.job!.id;
      deliveries.set(id, [...(deliveries.get(id) ?? []), delivery]);
      return handle(delivery);
    };
    for (let i = 0; i < 3; i++) {
      const onAnswer = (): void => {
        answers += 1;
        progress.changed();
      };
      workers.push(new ResilientWorker(replicas, `wf-worker-${i}-${randomUUID().slice(0, 8)}`, queue, 20, onAnswer, record));
    }
    const workflowsOf = (replica: Replica) => createClient(WorkflowServiceDefinition, replica.clients.channel);

    /** Creates workflow `i` through live replicas in turn until one answers; a retry refused as ALREADY_EXISTS was stored before. */
    async function create(i: number): Promise<void> {
      const tree = trees[i]!;
      const { kind } = toProto(tree, queue);
      if (kind === undefined || kind.$case === 'job') throw new Error('a workflow is a chain, group or batch');
      const definition: DeepPartial<WorkflowDefinitionMessage> = { kind };
      for (let attempt = 0; attempt < 500; attempt++) {
        const live = replicas.live();
        const replica = live[(i + attempt) % live.length]!;
        try {
          const { workflow } = await workflowsOf(replica).createWorkflow({ definition }, { signal: AbortSignal.timeout(5_000) });
          workflowIds[i] = workflow!.id;
        } catch (error) {
          if (!(error instanceof ClientError && error.code === Status.ALREADY_EXISTS)) {
            await pause(20);
            continue;
          }
          const firstJob = expectedRun(definitions[i]!).jobIds[0]!;
          workflowIds[i] = (await replica.clients.jobs.getJob({ jobId: firstJob })).job!.workflowId;
        }
        progress.changed();
        return;
      }
      throw new Error(`workflow ${i} was never created (seed ${SEED})`);
    }

    const units = (): number => workflowIds.filter(Boolean).length + answers;
    // Progress counts creations and answers: the jobs that run (the domain says which) answer once each, at least.
    const runs = definitions.reduce((sum, definition) => {
      const { plan, run } = expectedRun(definition);
      return sum + run.nodes.slice(0, plan.jobCount).filter((node) => node.status === 'succeeded' || node.status === 'failed').length;
    }, 0);
    const kills = Array.from({ length: REPLICA_KILLS }, () => ({
      at: Math.floor((WORKFLOWS + runs) * (0.05 + 0.8 * random())),
      index: Math.floor(random() * 3),
    })).toSorted((a, b) => a.at - b.at);
    const chaosLog: string[] = [];
    async function killReplicas(): Promise<void> {
      const restarts = new Map<number, Promise<unknown>>();
      for (const kill of kills) {
        await progress.until(
          () => units() >= kill.at,
          () => `progress ${kill.at}, got ${units()} (seed ${SEED})`,
          30_000,
        );
        while (replicas.live().length < 2) await Promise.race(restarts.values());
        const index = [0, 1, 2].map((k) => (kill.index + k) % 3).find((i) => replicas.at(i).process.isRunning)!;
        chaosLog.push(`replica ${index} at ${units()}`);
        await replicas.kill(index);
        restarts.set(
          index,
          replicas.restart(index).finally(() => restarts.delete(index)),
        );
      }
      await Promise.all(restarts.values());
    }
    async function createAll(): Promise<void> {
      for (let i = 0; i < WORKFLOWS; i++) await create(i);
    }
    await Promise.all([createAll(), killReplicas()]);

    // With the chaos over, every workflow ends within a few visibility timeouts.
    const observer = workflowsOf(replicas.at(0));
    const ended: Workflow[] = [];
    await eventually(
      async () => {
        for (let i = ended.length; i < WORKFLOWS; i++) {
          const { workflow } = await observer.getWorkflow({ workflowId: workflowIds[i]! });
          const state = workflow!.state;
          if (state === ProtoWorkflowState.WORKFLOW_STATE_PENDING || state === ProtoWorkflowState.WORKFLOW_STATE_RUNNING) return undefined;
          ended.push(workflow!);
        }
        return true;
      },
      () => `every workflow ended (seed ${SEED}); ${ended.length} of ${WORKFLOWS} have`,
      { timeoutMs: 10 * VISIBILITY_MS, intervalMs: 100 },
    );

    let rerunJobs = 0;
    const problems: string[] = [];
    for (let i = 0; i < WORKFLOWS; i++) {
      const definition = definitions[i]!;
      const workflow = ended[i]!;
      const expected = expectedRun(definition);
      const view = workflowView(expected.plan, expected.run, () => undefined);
      const label = `workflow ${i} (${workflow.id})`;
      const expectedState = expected.run.progress.state as keyof typeof WORKFLOW_STATES;
      if (workflow.state !== WORKFLOW_STATES[expectedState])
        problems.push(`${label} is ${ProtoWorkflowState[workflow.state]}, expected ${expectedState}`);
      for (const step of view.steps) {
        const actual = workflow.steps[step.index];
        const jobId = expected.jobIds[step.index]!;
        if (actual?.jobId !== jobId) problems.push(`${label} step ${step.key} has job ${actual?.jobId}, expected ${jobId}`);
        if (actual?.state !== STEP_STATES[step.state])
          problems.push(`${label} step ${step.key} is ${WorkflowStepState[actual?.state ?? 0]}, expected ${step.state}`);
        const received = deliveries.get(jobId) ?? [];
        const attempts = new Set(received.map((d) => d.job!.attempt));
        // Every delivery is an attempt of its own, and the job shows as many attempts as were delivered.
        if (attempts.size !== received.length || (actual?.attempts ?? 0) !== received.length) {
          problems.push(
            `${label} step ${step.key} was delivered ${received.length} times (attempts ${[...attempts].join(',')}) but shows ${actual?.attempts} attempts`,
          );
        }
        if (received.length > 1) {
          rerunJobs += 1;
          const { job } = await replicas.at(0).clients.jobs.getJob({ jobId });
          const reclaims = job!.errors.filter((e) => e.type !== 'wf.fatal').length;
          if (reclaims !== received.length - 1)
            problems.push(`${label} step ${step.key} ran ${received.length} times with ${reclaims} reclaims recorded`);
        }
        for (const delivery of received) {
          const parentResults = JSON.parse(
            assembleParentResults(expected.plan, step.index, (node) => expected.results.get(node)),
          ) as unknown;
          if (JSON.stringify(delivery.job!.parentResults ?? {}) !== JSON.stringify(parentResults)) {
            problems.push(
              `${label} step ${step.key} got parent_results ${JSON.stringify(delivery.job!.parentResults)}, expected ${JSON.stringify(parentResults)}`,
            );
          }
        }
      }
    }
    const endings = new Map<string, number>();
    for (const [why, n] of workers.flatMap((w) => [...w.endings])) endings.set(why, (endings.get(why) ?? 0) + n);
    const jobs = ended.reduce((sum, w) => sum + w.jobCount, 0);
    console.log(
      `workflow-replicas seed ${SEED}: ${WORKFLOWS} workflows, ${jobs} jobs; killed ${chaosLog.join(', ')}; ` +
        `${rerunJobs} job(s) ran again after a reclaim; worker sessions ended ${JSON.stringify(Object.fromEntries(endings))}`,
    );
    expect(problems).toEqual([]);
  }, 120_000);
});
