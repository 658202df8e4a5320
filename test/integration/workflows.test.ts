import { randomUUID } from 'node:crypto';
import { Status } from 'nice-grpc';
import { uuidv7 } from 'uuidv7';
import { HandlerCode } from '../../gen/ojs/server/v1/job';
import type { Delivery, FetchResponse } from '../../gen/ojs/server/v1/worker_service';
import {
  WorkflowState,
  WorkflowStepCancelReason,
  WorkflowStepRole,
  WorkflowStepState,
  WorkflowType,
  type DeepPartial,
  type Workflow,
  type WorkflowDefinition,
  type WorkflowElement,
} from '../../gen/ojs/server/v1/workflow_service';
import { EventWatch } from '../support/event-watch';
import { listJobIds } from '../support/job-listing';
import { ManualClock } from '../support/manual-clock';
import { rpcError } from '../support/rpc-error';
import { shareServer } from '../support/shared-server';
import type { StreamReader } from '../support/streams';
import { TestWorker, type BeatStream } from '../support/test-worker';

const HOUR = 3_600_000;
const { WORKFLOW_STEP_STATE_COMPLETED: COMPLETED, WORKFLOW_STEP_STATE_CANCELLED: CANCELLED } = WorkflowStepState;

type Element = DeepPartial<WorkflowElement>;
type Nested = DeepPartial<NonNullable<WorkflowDefinition['kind']>>;

/** A job element of `type` on `queue`, with more fields of its envelope. */
const job = (type: string, queue: string, more: DeepPartial<WorkflowElement['kind'] & { $case: 'job' }>['value'] = {}): Element => ({
  kind: { $case: 'job', value: { type, queue, args: [], ...more } },
});
const chain = (...steps: Element[]): Nested => ({ $case: 'chain', value: { steps } });
const group = (...jobs: Element[]): Nested => ({ $case: 'group', value: { jobs } });
const nested = (kind: Nested): Element => ({ kind });

/** A worker of its own queue, with its Beat stream open, reading deliveries one by one. */
class QueueWorker {
  private readonly buffered: Delivery[] = [];

  private constructor(
    readonly worker: TestWorker,
    readonly beat: BeatStream,
    private readonly fetch: StreamReader<FetchResponse>,
  ) {}

  static async open(shared: ReturnType<typeof shareServer>, queue: string): Promise<QueueWorker> {
    const worker = await TestWorker.register(shared.clients, { queues: [queue], concurrency: 20 });
    const beat = shared.closeAfterTest(worker.openBeat());
    await beat.beat();
    return new QueueWorker(worker, beat, shared.closeAfterTest(worker.openFetch()));
  }

  async next(): Promise<Delivery> {
    while (this.buffered.length === 0) this.buffered.push(...(await this.fetch.next()).deliveries);
    return this.buffered.shift()!;
  }

  /** The next `count` deliveries, by job type. */
  async take(count: number): Promise<Map<string, Delivery>> {
    const byType = new Map<string, Delivery>();
    for (let i = 0; i < count; i++) {
      const delivery = await this.next();
      byType.set(delivery.job!.type, delivery);
    }
    return byType;
  }

  async ack(delivery: Delivery, result: unknown): Promise<void> {
    await this.worker.ack(delivery, result);
  }
}

/**
 * Workflows through WorkflowService (ojs-workflows 11): chains, groups,
 * batches and their nesting, data passing, failure propagation,
 * cancellation and events, on a real server (each test on queues of its own).
 */
describe('workflows', () => {
  const clock = new ManualClock(Date.parse('2026-03-01T00:00:00.000Z'));
  const shared = shareServer({ clock, protocol: { streamKeepaliveMs: 50, heartbeatTimeoutMs: 100 * HOUR } });
  const workflows = () => shared.clients.workflows;
  const queueName = (): string => `wf-${randomUUID().slice(0, 8)}`;
  const create = async (kind: Nested, name = ''): Promise<Workflow> => {
    const definition = { kind: { ...kind, value: { ...kind.value, name } } } as DeepPartial<WorkflowDefinition>;
    return (await workflows().createWorkflow({ definition })).workflow!;
  };
  const get = async (workflowId: string): Promise<Workflow> => (await workflows().getWorkflow({ workflowId })).workflow!;

  it('runs a chain step after step, each step getting the results of the steps before it (7.2)', async () => {
    const queue = queueName();
    const worker = await QueueWorker.open(shared, queue);
    const created = await create(chain(job('order.validate', queue), job('payment.charge', queue), job('notify.send', queue)), 'orders');
    expect(created).toMatchObject({ type: WorkflowType.WORKFLOW_TYPE_CHAIN, name: 'orders', state: WorkflowState.WORKFLOW_STATE_PENDING });
    expect(created.steps.map((s) => [s.key, s.role, s.state])).toEqual([
      ['0', WorkflowStepRole.WORKFLOW_STEP_ROLE_STEP, WorkflowStepState.WORKFLOW_STEP_STATE_PENDING],
      ['1', WorkflowStepRole.WORKFLOW_STEP_ROLE_STEP, WorkflowStepState.WORKFLOW_STEP_STATE_WAITING],
      ['2', WorkflowStepRole.WORKFLOW_STEP_ROLE_STEP, WorkflowStepState.WORKFLOW_STEP_STATE_WAITING],
    ]);

    const first = await worker.next();
    expect(first.job).toMatchObject({ type: 'order.validate', workflowId: created.id, workflowStep: '0', parentResults: {} });
    expect(await get(created.id)).toMatchObject({ state: WorkflowState.WORKFLOW_STATE_RUNNING });
    await worker.ack(first, { order: { id: 'ord_123', total: 99.99 } });
    const second = await worker.next();
    expect(second.job).toMatchObject({
      type: 'payment.charge',
      workflowStep: '1',
      parentResults: { '0': { order: { id: 'ord_123', total: 99.99 } } },
    });
    await worker.ack(second, { charge_id: 'ch_abc' });
    const third = await worker.next();
    expect(third.job!.parentResults).toEqual({ '0': { order: { id: 'ord_123', total: 99.99 } }, '1': { charge_id: 'ch_abc' } });
    await worker.ack(third, 'sent');

    const done = await get(created.id);
    expect(done).toMatchObject({ state: WorkflowState.WORKFLOW_STATE_COMPLETED, jobCount: 3, completedCount: 3, failedCount: 0 });
    expect(done.completedAt).toBeDefined();
    expect(done.steps.map((s): unknown[] => [s.state, s.attempts, s.result, s.jobId])).toEqual([
      [COMPLETED, 1, { order: { id: 'ord_123', total: 99.99 } }, first.job!.id],
      [COMPLETED, 1, { charge_id: 'ch_abc' }, second.job!.id],
      [COMPLETED, 1, 'sent', third.job!.id],
    ]);
    // GetJob names the workflow, but only deliveries carry parent_results.
    const stored = (await shared.clients.jobs.getJob({ jobId: third.job!.id })).job!;
    expect(stored).toMatchObject({ workflowId: created.id, workflowStep: '2', parentResults: undefined });
  });

  it('runs a group at once, and ListJobs finds its jobs by workflow_id', async () => {
    const queue = queueName();
    const worker = await QueueWorker.open(shared, queue);
    const created = await create(group(job('export.csv', queue), job('export.pdf', queue), job('export.xlsx', queue)));
    expect(created.steps.every((s) => s.state === WorkflowStepState.WORKFLOW_STEP_STATE_PENDING)).toBe(true);
    const deliveries = await worker.take(3);
    expect([...deliveries.values()].map((d) => d.job!.parentResults)).toEqual([{}, {}, {}]);
    const listed = await listJobIds(shared.clients, { workflowId: created.id }, { pageSize: 100 });
    expect(listed.ids.toSorted()).toEqual(created.steps.map((s) => s.jobId).toSorted());
    expect((await listJobIds(shared.clients, { workflowId: uuidv7() })).ids).toEqual([]);
    expect((await rpcError(listJobIds(shared.clients, { workflowId: 'not-an-id' }))).fields).toEqual(['filter.workflow_id']);
    for (const [type, delivery] of deliveries) await worker.ack(delivery, { path: `/exports/${type}` });
    expect(await get(created.id)).toMatchObject({
      type: WorkflowType.WORKFLOW_TYPE_GROUP,
      state: WorkflowState.WORKFLOW_STATE_COMPLETED,
      completedCount: 3,
    });
  });

  describe('a batch fires its callbacks by the matrix of 6.5, each with every job result (7.4)', () => {
    const batchOf = (queue: string): Nested => ({
      $case: 'batch',
      value: {
        jobs: [job('email.send', queue, { args: ['a'] }), job('email.bounce', queue, { args: ['b'], retry: { maxAttempts: 1 } })],
        callbacks: {
          onComplete: { type: 'batch.report', queue },
          onSuccess: { type: 'batch.celebrate', queue },
          onFailure: { type: 'batch.alert', queue },
        },
      },
    });

    it('all jobs succeeded: on_complete and on_success fire, on_failure does not', async () => {
      const queue = queueName();
      const worker = await QueueWorker.open(shared, queue);
      const created = await create(batchOf(queue));
      expect(created.steps.map((s) => s.role)).toEqual([
        WorkflowStepRole.WORKFLOW_STEP_ROLE_JOB,
        WorkflowStepRole.WORKFLOW_STEP_ROLE_JOB,
        WorkflowStepRole.WORKFLOW_STEP_ROLE_ON_COMPLETE,
        WorkflowStepRole.WORKFLOW_STEP_ROLE_ON_SUCCESS,
        WorkflowStepRole.WORKFLOW_STEP_ROLE_ON_FAILURE,
      ]);
      const jobs = await worker.take(2);
      await worker.ack(jobs.get('email.send')!, { message_id: 'msg_1' });
      await worker.ack(jobs.get('email.bounce')!, { message_id: 'msg_2' });
      const callbacks = await worker.take(2);
      expect([...callbacks.keys()].toSorted()).toEqual(['batch.celebrate', 'batch.report']);
      for (const callback of callbacks.values()) {
        expect(callback.job!.parentResults).toEqual({ '0': { message_id: 'msg_1' }, '1': { message_id: 'msg_2' } });
        await worker.ack(callback, 'ok');
      }
      const done = await get(created.id);
      expect(done.state).toBe(WorkflowState.WORKFLOW_STATE_COMPLETED);
      expect(done.steps.map((s) => [s.key, s.state, s.cancelReason])).toEqual([
        ['0', COMPLETED, WorkflowStepCancelReason.WORKFLOW_STEP_CANCEL_REASON_UNSPECIFIED],
        ['1', COMPLETED, WorkflowStepCancelReason.WORKFLOW_STEP_CANCEL_REASON_UNSPECIFIED],
        ['on_complete', COMPLETED, WorkflowStepCancelReason.WORKFLOW_STEP_CANCEL_REASON_UNSPECIFIED],
        ['on_success', COMPLETED, WorkflowStepCancelReason.WORKFLOW_STEP_CANCEL_REASON_UNSPECIFIED],
        ['on_failure', CANCELLED, WorkflowStepCancelReason.WORKFLOW_STEP_CANCEL_REASON_NOT_TRIGGERED],
      ]);
    });

    it('a job failed: on_complete and on_failure fire (the failed job null in parent_results), on_success does not', async () => {
      const queue = queueName();
      const worker = await QueueWorker.open(shared, queue);
      const created = await create(batchOf(queue));
      const jobs = await worker.take(2);
      await worker.ack(jobs.get('email.send')!, { message_id: 'msg_1' });
      await worker.worker.fail(jobs.get('email.bounce')!, { type: 'bounced' });
      const callbacks = await worker.take(2);
      expect([...callbacks.keys()].toSorted()).toEqual(['batch.alert', 'batch.report']);
      for (const callback of callbacks.values()) {
        expect(callback.job!.parentResults).toEqual({ '0': { message_id: 'msg_1' }, '1': null });
        await worker.ack(callback, 'ok');
      }
      const done = await get(created.id);
      // The batch handled its failure: its callbacks ran (8.3), and the failure is counted.
      expect(done).toMatchObject({ state: WorkflowState.WORKFLOW_STATE_COMPLETED, completedCount: 3, failedCount: 1 });
      expect(done.steps.map((s) => [s.key, s.state, s.cancelReason])).toEqual([
        ['0', COMPLETED, WorkflowStepCancelReason.WORKFLOW_STEP_CANCEL_REASON_UNSPECIFIED],
        ['1', WorkflowStepState.WORKFLOW_STEP_STATE_FAILED, WorkflowStepCancelReason.WORKFLOW_STEP_CANCEL_REASON_UNSPECIFIED],
        ['on_complete', COMPLETED, WorkflowStepCancelReason.WORKFLOW_STEP_CANCEL_REASON_UNSPECIFIED],
        ['on_success', CANCELLED, WorkflowStepCancelReason.WORKFLOW_STEP_CANCEL_REASON_NOT_TRIGGERED],
        ['on_failure', COMPLETED, WorkflowStepCancelReason.WORKFLOW_STEP_CANCEL_REASON_UNSPECIFIED],
      ]);
    });
  });

  it('runs a chain with a group as a step (10.3), passing the extract result to the group and every transform result on (7.3)', async () => {
    const queue = queueName();
    const worker = await QueueWorker.open(shared, queue);
    const created = await create(
      chain(
        job('data.extract', queue),
        nested(group(job('transform.csv', queue), job('transform.parquet', queue), job('transform.json', queue))),
        job('data.load', queue),
      ),
      'etl-pipeline',
    );
    expect(created.steps.map((s) => s.key)).toEqual(['0', '1.0', '1.1', '1.2', '2']);
    expect(created.steps.map((s) => s.path)).toEqual(['steps[0]', 'steps[1].jobs[0]', 'steps[1].jobs[1]', 'steps[1].jobs[2]', 'steps[2]']);
    await worker.ack(await worker.next(), { rows: 3 });
    const transforms = await worker.take(3);
    for (const [type, delivery] of transforms) {
      expect(delivery.job!.parentResults).toEqual({ '0': { rows: 3 } });
      await worker.ack(delivery, { format: type.slice('transform.'.length) });
    }
    const load = await worker.next();
    expect(load.job).toMatchObject({ type: 'data.load', workflowStep: '2' });
    expect(load.job!.parentResults).toEqual({
      '0': { rows: 3 },
      '1': { '0': { format: 'csv' }, '1': { format: 'parquet' }, '2': { format: 'json' } },
    });
    await worker.ack(load, null);
    expect((await get(created.id)).state).toBe(WorkflowState.WORKFLOW_STATE_COMPLETED);
  });

  it('stops a chain whose step failed after its retries: the later steps are cancelled, the workflow failed', async () => {
    const queue = queueName();
    const worker = await QueueWorker.open(shared, queue);
    const retry = { maxAttempts: 2, initialInterval: 'PT1S', jitter: false };
    const created = await create(chain(job('a.step', queue, { retry }), job('b.step', queue), job('c.step', queue)));
    await worker.worker.fail(await worker.next(), { type: 'boom' });
    // A failure with attempts left is a retry, not a failed step.
    expect((await get(created.id)).steps[0]!.state).toBe(WorkflowStepState.WORKFLOW_STEP_STATE_PENDING);
    clock.advance(1_000);
    await shared.server.runMaintenance();
    const again = await worker.next();
    expect(again.job).toMatchObject({ type: 'a.step', attempt: 2 });
    await worker.worker.fail(again, { type: 'boom' });
    const failed = await get(created.id);
    expect(failed).toMatchObject({ state: WorkflowState.WORKFLOW_STATE_FAILED, failedCount: 1, completedCount: 0 });
    expect(failed.steps.map((s) => [s.state, s.cancelReason, s.attempts])).toEqual([
      [WorkflowStepState.WORKFLOW_STEP_STATE_FAILED, WorkflowStepCancelReason.WORKFLOW_STEP_CANCEL_REASON_UNSPECIFIED, 2],
      [CANCELLED, WorkflowStepCancelReason.WORKFLOW_STEP_CANCEL_REASON_UPSTREAM_FAILED, 0],
      [CANCELLED, WorkflowStepCancelReason.WORKFLOW_STEP_CANCEL_REASON_UPSTREAM_FAILED, 0],
    ]);
  });

  it('cancels a workflow: the worker of its active step is told on its Beat stream, pending steps are cancelled; again is refused', async () => {
    const queue = queueName();
    const worker = await QueueWorker.open(shared, queue);
    const created = await create(chain(job('a.step', queue), job('b.step', queue)));
    const active = await worker.next();
    const cancelled = (await workflows().cancelWorkflow({ workflowId: created.id })).workflow!;
    expect(await worker.beat.responses.nextMatching((r) => r.cancelledJobIds.length > 0)).toMatchObject({
      cancelledJobIds: [active.job!.id],
      inReplyTo: 0,
    });
    expect(cancelled.state).toBe(WorkflowState.WORKFLOW_STATE_CANCELLED);
    expect(cancelled.steps.map((s) => [s.state, s.cancelReason])).toEqual([
      [CANCELLED, WorkflowStepCancelReason.WORKFLOW_STEP_CANCEL_REASON_WORKFLOW_CANCELLED],
      [CANCELLED, WorkflowStepCancelReason.WORKFLOW_STEP_CANCEL_REASON_WORKFLOW_CANCELLED],
    ]);
    expect(await rpcError(worker.ack(active, 'late'))).toMatchObject({ code: Status.FAILED_PRECONDITION });
    expect(await rpcError(workflows().cancelWorkflow({ workflowId: created.id }))).toMatchObject({ code: Status.FAILED_PRECONDITION });
    expect(await get(created.id)).toEqual(cancelled);
  });

  it('refuses bad requests with a clear status: too many jobs, bad fields by path, unknown and malformed ids', async () => {
    const queue = queueName();
    const tooMany = group(...Array.from({ length: 1_001 }, () => job('x.y', queue)));
    const limit = await rpcError(create(tooMany));
    expect(limit).toMatchObject({ code: Status.INVALID_ARGUMENT, fields: ['jobs'] });
    expect(limit.message).toContain('at most 1000 jobs');
    const bad = await rpcError(create(chain(job('ok.step', queue), job('Not A Type', queue), job('x.y', 'Bad Queue'))));
    expect(bad.code).toBe(Status.INVALID_ARGUMENT);
    expect(bad.fields).toEqual(expect.arrayContaining(['steps[1].type', 'steps[2].queue']));
    expect(await rpcError(workflows().createWorkflow({}))).toMatchObject({ code: Status.INVALID_ARGUMENT, fields: ['definition'] });
    expect(await rpcError(create(chain(job('ok.step', queue), {})))).toMatchObject({ code: Status.INVALID_ARGUMENT, fields: ['steps[1]'] });
    // Six levels: a chain in a group in a chain in a group in a chain in a group.
    let deep: Nested = group(job('x.y', queue));
    for (let level = 0; level < 5; level++) deep = level % 2 === 0 ? chain(nested(deep)) : group(nested(deep));
    expect(await rpcError(create(deep))).toMatchObject({
      code: Status.INVALID_ARGUMENT,
      fields: ['steps[0].jobs[0].steps[0].jobs[0].steps[0]'],
    });
    // Nothing was stored of any of them.
    expect((await listJobIds(shared.clients, { queue })).ids).toEqual([]);

    const unknown = uuidv7();
    expect(await rpcError(workflows().getWorkflow({ workflowId: unknown }))).toMatchObject({ code: Status.NOT_FOUND });
    expect(await rpcError(workflows().cancelWorkflow({ workflowId: unknown }))).toMatchObject({ code: Status.NOT_FOUND });
    for (const workflowId of ['', 'not-a-uuid', randomUUID()]) {
      expect(await rpcError(workflows().getWorkflow({ workflowId }))).toMatchObject({
        code: Status.INVALID_ARGUMENT,
        fields: ['workflow_id'],
      });
    }
  });

  it('reports workflow.created, started, step_completed and completed, or failed, on WatchEvents', async () => {
    const queue = queueName();
    const worker = await QueueWorker.open(shared, queue);
    const watch = shared.closeAfterTest(EventWatch.open(shared.clients, { types: ['workflow.*'] }));
    await watch.opened();
    const ok = await create(chain(job('a.step', queue), job('b.step', queue)));
    await worker.ack(await worker.next(), 1);
    await worker.ack(await worker.next(), 2);
    const failing = await create(chain(job('c.step', queue, { retry: { maxAttempts: 1 } }), job('d.step', queue)));
    await worker.worker.fail(await worker.next(), { type: 'boom', code: HandlerCode.HANDLER_CODE_UNSPECIFIED });
    const typesOf = (events: readonly { type: string; subject: string }[], id: string): string[] =>
      events.filter((e) => e.subject === id).map((e) => e.type);
    const events = await watch.until(
      (all) => typesOf(all, ok.id).includes('workflow.completed') && typesOf(all, failing.id).includes('workflow.failed'),
      () => 'workflow.completed and workflow.failed',
    );
    expect(typesOf(events, ok.id)).toEqual([
      'workflow.created',
      'workflow.started',
      'workflow.step_completed',
      'workflow.step_completed',
      'workflow.completed',
    ]);
    expect(typesOf(events, failing.id)).toEqual(['workflow.created', 'workflow.started', 'workflow.step_failed', 'workflow.failed']);
    const failed = events.find((e) => e.subject === failing.id && e.type === 'workflow.failed')!;
    expect(failed.data).toMatchObject({ workflow_id: failing.id, workflow_type: 'chain', failed_step_type: 'c.step' });
  });
});
