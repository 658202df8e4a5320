import { uuidv7 } from 'uuidv7';
import { sha256Hex } from '../../lib/sha256';
import { refusal } from '../support/refusal';
import type { RecordedFact } from '../../src/domain/event-facts';
import type { Job } from '../../src/domain/job';
import type { JsonValue } from '../../src/domain/json';
import { JOB_SCAN_BUDGET, type JobQuery } from '../../src/domain/job-query';
import type { JobCreation } from '../../src/domain/job-submission';
import { DEFAULT_PAYLOAD_LIMITS, DELIVERY_BUDGET_BYTES, PARENT_RESULTS_INLINE_BYTES } from '../../src/domain/limits';
import { assembleParentResults, type StoredResult } from '../../src/domain/parent-results';
import { createWorkflow, type NewWorkflow } from '../../src/domain/workflow-creation';
import type { WorkflowDefinition } from '../../src/domain/workflow-definition';
import type { WorkflowFact } from '../../src/domain/workflow-facts';
import { settleNode, startWorkflow, type NodeOutcome, type WorkflowRun } from '../../src/domain/workflow-run';
import type { JobStore } from '../../src/store/job-store';
import { batch, chain, group, job } from '../unit/domain/workflow-fixtures';
import { StoreHarness, T0, VISIBILITY_MS } from './store-harness';

export interface WorkflowStoreFactory {
  /** A fresh, empty store. */
  create(): Promise<JobStore>;
}

const ZERO_RETENTION = { completedMs: 0, cancelledMs: 0, discardedMs: 0, maxJobs: 0 };

/** Job creation as the application does it, at `now`, with fresh ids. */
function creation(now = T0): JobCreation {
  return {
    now,
    newId: () => uuidv7(),
    digest: sha256Hex,
    defaults: { timeoutMs: 60_000, visibilityTimeoutMs: VISIBILITY_MS, gracePeriodMs: 30_000, heartbeatTimeoutMs: 60_000 },
    limits: DEFAULT_PAYLOAD_LIMITS,
    pending: false,
  };
}

/**
 * A workflow stored in the store under test, and its run as the domain
 * computes it from the same changes (startWorkflow, settleNode), so that
 * what the store keeps can be compared with what the rules say.
 */
class Flow {
  readonly plan: NewWorkflow['plan'];
  readonly jobs: Job[];
  run: WorkflowRun;
  readonly results = new Map<number, StoredResult>();

  constructor(readonly created: NewWorkflow) {
    this.plan = created.plan;
    this.jobs = created.jobs;
    this.run = created.run;
  }

  get id(): string {
    return this.plan.id;
  }

  node(key: string): number {
    const index = this.plan.nodes.findIndex((node) => node.key === key && node.role !== 'join');
    if (index < 0) throw new Error(`no node ${key}`);
    return index;
  }

  jobId(key: string): string {
    return this.jobs[this.node(key)]!.id;
  }

  /** The domain's run after a job of the workflow started. */
  started(now: number): void {
    this.run = startWorkflow(this.plan, this.run, now).run;
  }

  /** The domain's run after node `key`'s job reached `outcome` (a success with `result`). */
  settled(key: string, outcome: NodeOutcome, now: number, result?: unknown): void {
    const index = this.node(key);
    const advance = settleNode(this.plan, this.run, index, outcome, now);
    if (result !== undefined && advance.changed.includes(index)) {
      const json = JSON.stringify(result);
      this.results.set(index, { json, bytes: Buffer.byteLength(json) });
    }
    this.run = advance.run;
  }

  /** parent_results of node `key` as the domain assembles them from the results so far. */
  parentResults(key: string): unknown {
    return JSON.parse(assembleParentResults(this.plan, this.node(key), (node) => this.results.get(node)));
  }
}

/**
 * The workflow storage every store must have (JobStore's WorkflowStore
 * part): creation, reads, cancellation, and the advance every job change
 * makes in the same atomic step (ack, fail, recover, a worker's removal,
 * cancel, expiry), with its facts, parent_results and retention.
 */
export function describeWorkflowStoreContract(storeName: string, factory: WorkflowStoreFactory): void {
  describe(`${storeName} workflow store contract`, () => {
    let store: JobStore;
    let h: StoreHarness;

    beforeEach(async () => {
      store = await factory.create();
      h = new StoreHarness(store);
    });
    afterEach(async () => {
      h.close();
      const problems = await store.audit();
      await store.close();
      if (problems.length > 0) throw new Error(`the store audit found:\n${problems.join('\n')}`);
    });

    async function create(definition: WorkflowDefinition, now = T0): Promise<Flow> {
      const flow = new Flow(createWorkflow(definition, creation(now)));
      await store.createWorkflow(flow.created);
      return flow;
    }

    /** Claims every available job of the default queue for `workerId`. */
    async function claimAll(workerId: string, now: number): Promise<Job[]> {
      return (await h.claim(workerId, ['default'], 100, now)).jobs;
    }

    /** Claims and acks the job of `key` (it must be the only one available), as the domain mirror does. */
    async function complete(flow: Flow, workerId: string, key: string, now: number, result: JsonValue = { from: key }): Promise<Job> {
      const [claimed, ...others] = await claimAll(workerId, now);
      expect([claimed?.id, others.length]).toEqual([flow.jobId(key), 0]);
      if (flow.run.progress.state === 'pending') flow.started(now);
      const [outcome] = await store.ack({ workerId, items: [{ jobId: claimed!.id, leaseToken: claimed!.lease!.token, result }], now });
      expect(outcome?.ok).toBe(true);
      flow.settled(key, 'succeeded', now, result);
      return claimed!;
    }

    /** Fails a held job for good (a handler's discard). */
    async function discard(flow: Flow, workerId: string, claimed: Job, now: number): Promise<void> {
      const outcome = h.outcome(claimed, { type: 'Boom', message: 'no', code: 'discard' }, now);
      expect(outcome.state).toBe('discarded');
      const [result] = await store.fail({ workerId, items: [{ jobId: claimed.id, leaseToken: claimed.lease!.token, outcome }], now });
      expect(result?.ok).toBe(true);
      flow.settled(claimed.workflow!.step, 'failed', now);
    }

    async function expectRun(flow: Flow): Promise<void> {
      expect((await store.getWorkflow(flow.id))?.run).toEqual(flow.run);
    }

    async function states(flow: Flow): Promise<Record<string, string | undefined>> {
      const jobs = await store.getJobs(flow.jobs.map((j) => j.id));
      return Object.fromEntries(flow.plan.nodes.slice(0, flow.plan.jobCount).map((node, i) => [node.key, jobs[i]?.state]));
    }

    async function facts(): Promise<RecordedFact['fact'][]> {
      return (await store.readFacts({ limit: 1_000 })).facts.map((recorded) => recorded.fact);
    }

    const workflowFacts = async (id: string): Promise<WorkflowFact[]> =>
      (await facts()).filter((fact): fact is WorkflowFact => fact.kind === 'workflow' && fact.workflowId === id);

    it('creates a workflow: jobs without dependencies available, the others pending, each linked to its node', async () => {
      const flow = await create(chain(job('a.one'), group(job('b.one'), job('b.two')), job('c.one')));
      const stored = await store.getJobs(flow.jobs.map((j) => j.id));
      expect(stored.map((j) => [j?.workflow, j?.state])).toEqual(
        flow.jobs.map((j, i) => [{ id: flow.id, node: i, step: flow.plan.nodes[i]!.key }, i === 0 ? 'available' : 'pending']),
      );
      const record = await store.getWorkflow(flow.id);
      expect(record).toEqual({
        plan: flow.plan,
        run: flow.run,
        jobIds: flow.jobs.map((j) => j.id),
        jobs: flow.jobs.map((j, i) => ({ id: j.id, queue: 'default', state: i === 0 ? 'available' : 'pending', attempt: 0 })),
      });
      expect(await store.getWorkflow(uuidv7())).toBeUndefined();
      const created = await workflowFacts(flow.id);
      expect(created).toEqual([
        { kind: 'workflow', at: T0, workflowId: flow.id, workflowType: 'chain', name: '', change: 'created', jobCount: 4 },
      ]);
      // The workflow's fact comes before its jobs'.
      const all = await facts();
      expect(all.findIndex((fact) => fact.kind === 'workflow')).toBeLessThan(all.findIndex((fact) => fact.kind === 'job'));
    });

    it('refuses a workflow whose id or one of whose job ids is taken, storing nothing', async () => {
      const flow = await create(chain(job('a.one'), job('a.two')));
      await expect(store.createWorkflow(flow.created)).rejects.toMatchObject({ code: 'duplicate' });
      const [taken] = await h.enqueue({ type: 'x.y' });
      const other = new Flow(createWorkflow(chain(job('a.one'), job('a.two', { id: taken!.id })), creation()));
      expect(await refusal(store.createWorkflow(other.created))).toMatchObject({ code: 'duplicate' });
      expect(await store.getWorkflow(other.id)).toBeUndefined();
      expect(await store.getJob(other.jobs[0]!.id)).toBeUndefined();
    });

    it('starts on the first claim and advances a chain on ack: the next job available with its parent results', async () => {
      const flow = await create(chain(job('a.one'), job('a.two'), job('a.three')));
      const worker = await h.register();
      await complete(flow, worker.workerId, '0', T0 + 10, { n: 1 });
      const second = await store.getJob(flow.jobId('1'));
      expect(second).toMatchObject({ state: 'available', parentResults: flow.parentResults('1') });
      expect(second?.parentResults).toEqual({ '0': { n: 1 } });
      await expectRun(flow);
      const claimed = await complete(flow, worker.workerId, '1', T0 + 20, { n: 2 });
      // A worker receives the parent results with the job it claims.
      expect(claimed.parentResults).toEqual(flow.parentResults('1'));
      expect((await store.getJob(flow.jobId('2')))?.parentResults ?? {}).toEqual(flow.parentResults('2'));
      await complete(flow, worker.workerId, '2', T0 + 30, 'done');
      expect(flow.run.progress.state).toBe('completed');
      await expectRun(flow);
      const record = await store.getWorkflow(flow.id);
      expect(record?.jobs[2]).toEqual({
        id: flow.jobId('2'),
        queue: 'default',
        state: 'completed',
        attempt: 1,
        startedAt: T0 + 30,
        completedAt: T0 + 30,
        result: 'done',
      });
      const changes = (await workflowFacts(flow.id)).map((fact) => [fact.change, fact.step, fact.at]);
      expect(changes).toEqual([
        ['created', undefined, T0],
        ['started', undefined, T0 + 10],
        ['step_completed', '0', T0 + 10],
        ['step_completed', '1', T0 + 20],
        ['step_completed', '2', T0 + 30],
        ['completed', undefined, T0 + 30],
      ]);
      const [, , step] = await workflowFacts(flow.id);
      expect(step).toMatchObject({ stepType: 'a.one', jobId: flow.jobId('0'), stepsRemaining: 2, durationMs: 0 });
      expect((await workflowFacts(flow.id)).at(-1)).toMatchObject({ durationMs: 30 });
      // The jobs an advance makes available say why.
      const madeAvailable = (await facts()).filter((fact) => fact.kind === 'job' && fact.from === 'pending' && fact.to === 'available');
      expect(madeAvailable.map((fact) => fact.kind === 'job' && [fact.jobId, fact.reason])).toEqual([
        [flow.jobId('1'), 'workflow'],
        [flow.jobId('2'), 'workflow'],
      ]);
    });

    it('fails a chain whose step is discarded, cancelling the steps after it', async () => {
      const flow = await create(chain(job('a.one'), job('a.two'), job('a.three')));
      const worker = await h.register();
      await complete(flow, worker.workerId, '0', T0 + 10);
      const [second] = await claimAll(worker.workerId, T0 + 20);
      await discard(flow, worker.workerId, second!, T0 + 30);
      expect(flow.run.progress.state).toBe('failed');
      await expectRun(flow);
      expect(await states(flow)).toEqual({ '0': 'completed', '1': 'discarded', '2': 'cancelled' });
      const ended = (await workflowFacts(flow.id)).at(-1);
      expect(ended).toMatchObject({ change: 'failed', failedStep: '1', failedStepType: 'a.two', failedJobId: flow.jobId('1') });
      expect((await workflowFacts(flow.id)).map((fact) => fact.change)).toEqual([
        'created',
        'started',
        'step_completed',
        'step_failed',
        'failed',
      ]);
      const withdrawn = (await facts()).find((fact) => fact.kind === 'job' && fact.jobId === flow.jobId('2') && fact.to === 'cancelled');
      expect(withdrawn).toMatchObject({ from: 'pending', reason: 'workflow' });
    });

    it('keeps a chain going through a retryable failure, and fails it when a recovery discards the step', async () => {
      const flow = await create(chain(job('a.one', { retry: { maxAttempts: 1 } }), job('a.two')));
      const worker = await h.register();
      const [first] = await claimAll(worker.workerId, T0 + 10);
      flow.started(T0 + 10);
      const expiredAt = first!.lease!.expiresAt;
      const outcome = h.outcome(first!, { type: 'LeaseExpired', message: 'gone' }, expiredAt);
      expect(outcome.state).toBe('discarded');
      await store.recover({
        items: [{ jobId: first!.id, leaseToken: first!.lease!.token, outcome, requireExpired: true }],
        now: expiredAt,
      });
      flow.settled('0', 'failed', expiredAt);
      await expectRun(flow);
      expect(await states(flow)).toEqual({ '0': 'discarded', '1': 'cancelled' });
    });

    it('fails a workflow job held by a worker that is removed, and one whose job an operator cancels', async () => {
      const flow = await create(group(job('a.one', { retry: { maxAttempts: 1 } }), job('a.two'), job('a.three')));
      const worker = await h.register();
      const claimed = await claimAll(worker.workerId, T0 + 10);
      flow.started(T0 + 10);
      const first = claimed.find((j) => j.id === flow.jobId('0'))!;
      const others = claimed.filter((j) => j !== first);
      const outcome = h.outcome(first, { type: 'WorkerLost', message: 'gone' }, T0 + 20);
      const release = others.map((held) => ({
        jobId: held.id,
        leaseToken: held.lease!.token,
        outcome: h.outcome(held, { type: 'WorkerLost', message: 'gone' }, T0 + 20, true),
      }));
      const removed = await store.removeWorker({
        workerId: worker.workerId,
        reason: 'dead',
        recoveries: [{ jobId: first.id, leaseToken: first.lease!.token, outcome }, ...release],
        now: T0 + 20,
      });
      expect(removed.removed).toBe(true);
      flow.settled('0', 'failed', T0 + 20);
      await expectRun(flow);
      await store.cancel(flow.jobId('1'), T0 + 30);
      flow.settled('1', 'failed', T0 + 30);
      await expectRun(flow);
      const next = await h.register();
      await complete(flow, next.workerId, '2', T0 + 40);
      expect(flow.run.progress.state).toBe('failed');
      await expectRun(flow);
      expect(await states(flow)).toEqual({ '0': 'discarded', '1': 'cancelled', '2': 'completed' });
    });

    it('settles the node of a waiting job an operator cancels or that expires, once the steps before it settle', async () => {
      const flow = await create(chain(job('a.one'), job('a.two'), job('a.three', { expiresAt: T0 + 1_000 })));
      await store.cancelJobs({ jobIds: [flow.jobId('1')], now: T0 + 10 });
      flow.settled('1', 'failed', T0 + 10);
      await expectRun(flow);
      // The expiry pass discards the last job, still waiting (pending).
      const discarded = await h.expireWaiting(T0 + 2_000);
      expect(discarded.map((t) => [t.jobId, t.from, t.to])).toEqual([[flow.jobId('2'), 'pending', 'discarded']]);
      flow.settled('2', 'failed', T0 + 2_000);
      await expectRun(flow);
      const worker = await h.register();
      await complete(flow, worker.workerId, '0', T0 + 3_000);
      expect(flow.run.progress.state).toBe('failed');
      await expectRun(flow);
    });

    it('waits for every job of a group, passing all their results to the step after it', async () => {
      const flow = await create(chain(group(job('a.one'), job('a.two')), job('b.one')));
      const worker = await h.register();
      const claimed = await claimAll(worker.workerId, T0 + 10);
      flow.started(T0 + 10);
      expect(claimed.map((j) => j.id).toSorted()).toEqual([flow.jobId('0.0'), flow.jobId('0.1')].toSorted());
      const byKey = (key: string) => claimed.find((j) => j.id === flow.jobId(key))!;
      await store.ack({
        workerId: worker.workerId,
        items: [{ jobId: byKey('0.1').id, leaseToken: byKey('0.1').lease!.token, result: 2 }],
        now: T0 + 20,
      });
      flow.settled('0.1', 'succeeded', T0 + 20, 2);
      expect(await h.state(flow.jobId('1'))).toBe('pending');
      await store.ack({
        workerId: worker.workerId,
        items: [{ jobId: byKey('0.0').id, leaseToken: byKey('0.0').lease!.token, result: 1 }],
        now: T0 + 30,
      });
      flow.settled('0.0', 'succeeded', T0 + 30, 1);
      await expectRun(flow);
      const next = await store.getJob(flow.jobId('1'));
      expect(next?.state).toBe('available');
      expect(next?.parentResults).toEqual(flow.parentResults('1'));
      // A group's results come as one object, by the group's job index (ojs-workflows 7).
      expect(next?.parentResults).toEqual({ '0': { '0': 1, '1': 2 } });
    });

    describe.each([
      { name: 'every job succeeds', outcomes: { '0': true, '1': true }, runs: ['on_complete', 'on_success'], cancelled: ['on_failure'] },
      { name: 'a job fails', outcomes: { '0': true, '1': false }, runs: ['on_complete', 'on_failure'], cancelled: ['on_success'] },
      { name: 'every job fails', outcomes: { '0': false, '1': false }, runs: ['on_complete', 'on_failure'], cancelled: ['on_success'] },
    ])('a batch whose $name (ojs-workflows 6.5)', ({ outcomes, runs, cancelled }) => {
      it(`runs ${runs.join(' and ')}, cancels the other callback, and ends as the domain says`, async () => {
        const flow = await create(
          batch([job('b.one'), job('b.two')], { onComplete: 'cb.complete', onSuccess: 'cb.success', onFailure: 'cb.failure' }),
        );
        const worker = await h.register();
        const claimed = await claimAll(worker.workerId, T0 + 10);
        flow.started(T0 + 10);
        for (const [key, succeeds] of Object.entries(outcomes)) {
          const held = claimed.find((j) => j.id === flow.jobId(key))!;
          if (succeeds) {
            await store.ack({
              workerId: worker.workerId,
              items: [{ jobId: held.id, leaseToken: held.lease!.token, result: key }],
              now: T0 + 20,
            });
            flow.settled(key, 'succeeded', T0 + 20, key);
          } else {
            await discard(flow, worker.workerId, held, T0 + 20);
          }
        }
        await expectRun(flow);
        const callbacks = await states(flow);
        for (const key of runs) expect([key, callbacks[key]]).toEqual([key, 'available']);
        for (const key of cancelled) expect([key, callbacks[key]]).toEqual([key, 'cancelled']);
        // Callbacks receive the results of the batch's jobs.
        for (const key of runs) expect((await store.getJob(flow.jobId(key)))?.parentResults ?? {}).toEqual(flow.parentResults(key));
        const callbackJobs = await claimAll(worker.workerId, T0 + 30);
        for (const held of callbackJobs) {
          await store.ack({ workerId: worker.workerId, items: [{ jobId: held.id, leaseToken: held.lease!.token }], now: T0 + 40 });
          flow.settled(held.workflow!.step, 'succeeded', T0 + 40);
        }
        expect(flow.run.progress.state).not.toBe('running');
        await expectRun(flow);
      });
    });

    it('cancels a workflow: waiting and available jobs cancelled, active ones too, their workers told', async () => {
      const flow = await create(chain(group(job('a.one'), job('a.two')), job('b.one')));
      const worker = await h.register();
      const claimed = await claimAll(worker.workerId, T0 + 10);
      flow.started(T0 + 10);
      const held = claimed.find((j) => j.id === flow.jobId('0.0'));
      await store.ack({ workerId: worker.workerId, items: [{ jobId: held!.id, leaseToken: held!.lease!.token, result: 1 }], now: T0 + 20 });
      flow.settled('0.0', 'succeeded', T0 + 20, 1);
      const { workflow, transitions } = await store.cancelWorkflow({ workflowId: flow.id, now: T0 + 30, actor: 'ops' });
      expect(workflow.run.progress).toMatchObject({ state: 'cancelled', completedAt: T0 + 30, completedCount: 1 });
      expect(transitions.map((t) => [t.jobId, t.from, t.to, t.actor])).toEqual([
        [flow.jobId('0.1'), 'active', 'cancelled', 'ops'],
        [flow.jobId('1'), 'pending', 'cancelled', 'ops'],
      ]);
      expect(await states(flow)).toEqual({ '0.0': 'completed', '0.1': 'cancelled', '1': 'cancelled' });
      const told = await h.waitForSignal('jobsCancelled', (signal) => signal.workerId === worker.workerId);
      expect(told.jobIds).toEqual([flow.jobId('0.1')]);
      expect(await store.getWorkflow(flow.id)).toEqual(workflow);
      expect((await workflowFacts(flow.id)).map((fact) => fact.change)).toEqual(['created', 'started', 'step_completed', 'cancelled']);
      // An ended workflow cannot be cancelled; an unknown one is not found.
      expect(await refusal(store.cancelWorkflow({ workflowId: flow.id, now: T0 + 40 }))).toMatchObject({ code: 'invalid_state' });
      expect(await refusal(store.cancelWorkflow({ workflowId: uuidv7(), now: T0 + 40 }))).toMatchObject({ code: 'not_found' });
    });

    it('refuses to activate a pending job that waits for its workflow', async () => {
      const flow = await create(chain(job('a.one'), job('a.two')));
      expect(await refusal(store.activate(flow.jobId('1'), T0 + 10))).toMatchObject({ code: 'invalid_state' });
      expect(await h.state(flow.jobId('1'))).toBe('pending');
    });

    it('replaces results beyond the inline bound by a stand-in naming the step', async () => {
      const big = 'x'.repeat(600 * 1024);
      const flow = await create(chain(group(job('a.one'), job('a.two')), job('b.one')));
      const worker = await h.register();
      const claimed = await claimAll(worker.workerId, T0 + 10);
      flow.started(T0 + 10);
      for (const [i, key] of ['0.0', '0.1'].entries()) {
        const held = claimed.find((j) => j.id === flow.jobId(key))!;
        await store.ack({
          workerId: worker.workerId,
          items: [{ jobId: held.id, leaseToken: held.lease!.token, result: big }],
          now: T0 + 20 + i,
        });
        flow.settled(key, 'succeeded', T0 + 20 + i, big);
      }
      const parentResults = (await store.getJob(flow.jobId('1')))?.parentResults;
      // Compared as text: a failure would print a megabyte.
      const expected = assembleParentResults(flow.plan, flow.node('1'), (node) => flow.results.get(node), PARENT_RESULTS_INLINE_BYTES);
      expect(JSON.stringify(parentResults) === JSON.stringify(JSON.parse(expected))).toBe(true);
      // The nearest result (the last job) is inlined; the one that does not fit is named, with its size.
      const results = parentResults?.['0'] as Record<string, unknown> | undefined;
      expect(results?.['0']).toEqual({ result_omitted: true, step: '0.0', result_size_bytes: big.length + 2 });
      expect(results?.['1'] === big).toBe(true);
    });

    it("keeps a step's result for the steps after it and for reads once its job is pruned", async () => {
      const flow = await create(chain(group(job('a.one'), job('a.two')), job('b.one')));
      const worker = await h.register();
      const claimed = await claimAll(worker.workerId, T0 + 10);
      flow.started(T0 + 10);
      const first = claimed.find((j) => j.id === flow.jobId('0.0'))!;
      await store.ack({
        workerId: worker.workerId,
        items: [{ jobId: first.id, leaseToken: first.lease!.token, result: { kept: true } }],
        now: T0 + 20,
      });
      flow.settled('0.0', 'succeeded', T0 + 20, { kept: true });
      expect(await store.pruneTerminal(T0 + 30, ZERO_RETENTION, 100)).toBe(1);
      expect(await store.getJob(first.id)).toBeUndefined();
      const second = claimed.find((j) => j.id === flow.jobId('0.1'))!;
      await store.ack({
        workerId: worker.workerId,
        items: [{ jobId: second.id, leaseToken: second.lease!.token, result: 2 }],
        now: T0 + 40,
      });
      flow.settled('0.1', 'succeeded', T0 + 40, 2);
      expect((await store.getJob(flow.jobId('1')))?.parentResults).toEqual({ '0': { '0': { kept: true }, '1': 2 } });
      const record = await store.getWorkflow(flow.id);
      expect(record?.jobs[0]).toBeUndefined();
      expect(record?.jobs[1]).toMatchObject({ state: 'completed', result: 2 });
      await expectRun(flow);
    });

    it('prunes an ended workflow past the retention of its end, its jobs by their own', async () => {
      const retention = { completedMs: 1_000, cancelledMs: 5_000, discardedMs: 60_000, maxJobs: 0 };
      const done = await create(chain(job('a.one')));
      const worker = await h.register();
      await complete(done, worker.workerId, '0', T0 + 10);
      const cancelled = await create(chain(job('a.two'), job('a.three')));
      await store.cancelWorkflow({ workflowId: cancelled.id, now: T0 + 10 });
      const running = await create(chain(job('a.four'), job('a.five')));
      await store.pruneTerminal(T0 + 1_010, retention, 100);
      expect(await store.getWorkflow(done.id)).toBeUndefined();
      expect(await store.getWorkflow(cancelled.id)).toBeDefined();
      await store.pruneTerminal(T0 + 5_010, retention, 100);
      expect(await store.getWorkflow(cancelled.id)).toBeUndefined();
      expect(await store.getWorkflow(running.id)).toBeDefined();
      expect(await h.state(running.jobId('1'))).toBe('pending');
    });

    it("lists a workflow's jobs with filter.workflow", async () => {
      const flow = await create(chain(job('a.one'), group(job('b.one'), job('b.two'))));
      const other = await create(chain(job('a.one')));
      await h.enqueue({ type: 'plain.job' });
      const query = (workflow: string): JobQuery => ({
        filter: { states: ['available', 'pending'], workflow },
        order: 'oldest',
        limit: 100,
        maxBytes: DELIVERY_BUDGET_BYTES,
        scanBudget: JOB_SCAN_BUDGET,
      });
      const listed = await store.listJobs(query(flow.id));
      expect(listed.items.map((j) => j.id).toSorted()).toEqual(flow.jobs.map((j) => j.id).toSorted());
      expect((await store.findJobIds(query(other.id))).items).toEqual([other.jobs[0]!.id]);
    });
  });
}
