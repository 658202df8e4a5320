import type { JobState } from '../../../src/domain/job';
import type { JsonValue } from '../../../src/domain/json';
import { workflowView, type StepJob } from '../../../src/domain/workflow-view';
import { NOW, WorkflowDriver, batch, chain, group, job } from './workflow-fixtures';

/** The jobs as a store would report them: `active` for the keys given, the rest in their created state. */
function jobsOf(wf: WorkflowDriver, active: string[] = [], results = new Map<string, JsonValue>()) {
  return (index: number): StepJob | undefined => {
    const created = wf.created.jobs[index];
    if (created === undefined) return undefined;
    const key = wf.plan.nodes[index]?.key ?? '';
    const state: JobState = active.includes(key) ? 'active' : created.state;
    const result = results.get(key);
    return {
      id: created.id,
      queue: created.queue,
      state,
      attempt: active.includes(key) ? 1 : 0,
      ...(result === undefined ? {} : { result }),
    };
  };
}

describe('the view of a workflow (GetWorkflow, section 11.2)', () => {
  it('shows each step waiting, pending, active or completed, with its job id, attempts and result', () => {
    const wf = new WorkflowDriver({
      ...chain(job('order.validate'), job('payment.charge'), job('inventory.reserve')),
      name: 'order-processing',
    });
    wf.start('0');
    wf.succeed('0', { valid: true });
    const view = workflowView(wf.plan, wf.run, jobsOf(wf, ['1'], new Map([['0', { valid: true }]])));
    expect(view).toMatchObject({
      id: wf.plan.id,
      type: 'chain',
      name: 'order-processing',
      state: 'running',
      createdAt: NOW,
      startedAt: NOW,
      jobCount: 3,
      completedCount: 1,
      failedCount: 0,
    });
    expect(view.completedAt).toBeUndefined();
    expect(view.steps.map(({ key, path, type, state, attempts, result }) => ({ key, path, type, state, attempts, result }))).toEqual([
      { key: '0', path: 'steps[0]', type: 'order.validate', state: 'completed', attempts: 0, result: { valid: true } },
      { key: '1', path: 'steps[1]', type: 'payment.charge', state: 'active', attempts: 1, result: undefined },
      { key: '2', path: 'steps[2]', type: 'inventory.reserve', state: 'waiting', attempts: 0, result: undefined },
    ]);
    expect(view.steps.map((step) => step.jobId)).toEqual(wf.created.jobs.map((j) => j.id));
  });

  it('says why each cancelled step did not run: not triggered, an upstream failure, or the workflow cancelled', () => {
    const wf = new WorkflowDriver(chain(batch([job('b.x')], { onSuccess: 'b.ok', onFailure: 'b.alert' }), job('a.next'), job('a.last')));
    wf.fail('0.0');
    wf.fail('0.on_failure');
    const failed = workflowView(wf.plan, wf.run, jobsOf(wf));
    expect(failed.steps.map(({ key, state, cancelReason }) => [key, state, cancelReason])).toEqual([
      ['0.0', 'failed', undefined],
      ['0.on_success', 'cancelled', 'not_triggered'],
      ['0.on_failure', 'failed', undefined],
      ['1', 'cancelled', 'upstream_failed'],
      ['2', 'cancelled', 'upstream_failed'],
    ]);
    expect(failed).toMatchObject({ state: 'failed', completedAt: NOW, failedCount: 2 });

    const cancelled = new WorkflowDriver(group(job('g.a'), chain(job('c.one'), job('c.two'))));
    cancelled.cancel();
    const view = workflowView(cancelled.plan, cancelled.run, jobsOf(cancelled));
    expect(view.steps.map((step) => step.cancelReason)).toEqual(['workflow_cancelled', 'workflow_cancelled', 'workflow_cancelled']);
  });

  it('leaves joins out', () => {
    const wf = new WorkflowDriver(chain(group(job('g.a'), job('g.b')), group(job('h.a'), job('h.b'))));
    expect(wf.plan.nodes).toHaveLength(5);
    expect(workflowView(wf.plan, wf.run, jobsOf(wf)).steps.map((step) => step.key)).toEqual(['0.0', '0.1', '1.0', '1.1']);
  });
});
