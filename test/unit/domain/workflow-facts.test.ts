import { eventDraftsOf } from '../../../src/domain/event-catalog';
import { createdFact, workflowFacts, type WorkflowFactContext } from '../../../src/domain/workflow-facts';
import { NOW, WorkflowDriver, batch, chain, group, job } from './workflow-fixtures';

const TRACEPARENT = '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01';

function contextOf(wf: WorkflowDriver): WorkflowFactContext {
  return { plan: wf.plan, jobIds: wf.created.jobs.map((j) => j.id), traceparent: TRACEPARENT };
}

describe('workflow facts (ojs-events 3.5, ojs-workflows appendix B)', () => {
  it('tells a chain from its first start to its end, step by step', () => {
    const wf = new WorkflowDriver({ ...chain(job('a'), job('b')), name: 'pipeline' });
    const context = contextOf(wf);
    expect(createdFact(context, NOW)).toMatchObject({
      kind: 'workflow',
      change: 'created',
      name: 'pipeline',
      jobCount: 2,
      workflowType: 'chain',
    });
    expect(workflowFacts(context, wf.start('0'), NOW).map((f) => f.change)).toEqual(['started']);
    const first = workflowFacts(context, wf.succeed('0'), NOW + 5, { node: 0, outcome: 'succeeded', durationMs: 5 });
    expect(first).toEqual([
      expect.objectContaining({
        change: 'step_completed',
        step: '0',
        stepType: 'a',
        jobId: wf.created.jobs[0]!.id,
        stepsRemaining: 1,
        durationMs: 5,
      }),
    ]);
    const last = workflowFacts(context, wf.succeed('1'), NOW + 9, { node: 1, outcome: 'succeeded' });
    expect(last.map((f) => f.change)).toEqual(['step_completed', 'completed']);
    expect(last[1]).toMatchObject({ durationMs: 0, traceparent: TRACEPARENT });
  });

  it('starts a pending workflow whose first job failed without running, and names the first failed step when it fails', () => {
    const wf = new WorkflowDriver(group(job('a'), job('b')));
    const context = contextOf(wf);
    const failed = workflowFacts(context, wf.fail('1'), NOW, { node: 1, outcome: 'failed' });
    expect(failed.map((f) => f.change)).toEqual(['started', 'step_failed']);
    const ended = workflowFacts(context, wf.fail('0'), NOW, { node: 0, outcome: 'failed' });
    expect(ended.map((f) => f.change)).toEqual(['step_failed', 'failed']);
    expect(ended[1]).toMatchObject({ failedStep: '1', failedStepType: 'b', failedJobId: wf.created.jobs[1]!.id });
  });

  it('tells nothing for a node that had settled already', () => {
    const wf = new WorkflowDriver(batch([job('a')], { onSuccess: 'done' }));
    wf.start('0');
    wf.cancel();
    expect(workflowFacts(contextOf(wf), wf.fail('0'), NOW, { node: 0, outcome: 'failed' })).toEqual([]);
  });

  it('becomes workflow events with the workflow as subject and the step job for job filters', () => {
    const wf = new WorkflowDriver({ ...chain(job('a')), name: 'one' });
    wf.start('0');
    const [fact] = workflowFacts(contextOf(wf), wf.succeed('0'), NOW, { node: 0, outcome: 'succeeded', durationMs: 3 });
    const drafts = eventDraftsOf(fact!);
    expect(drafts).toHaveLength(1);
    expect(drafts[0]).toMatchObject({
      type: 'workflow.step_completed',
      subject: wf.plan.id,
      jobId: wf.created.jobs[0]!.id,
      jobType: 'a',
      data: {
        workflow_id: wf.plan.id,
        workflow_name: 'one',
        workflow_type: 'chain',
        total_steps: 1,
        step_id: '0',
        step_type: 'a',
        duration_ms: 3,
        steps_remaining: 0,
        trace_id: '0af7651916cd43dd8448eb211c80319c',
      },
    });
  });
});
