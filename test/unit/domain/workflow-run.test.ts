import { OjsError } from '../../../src/domain/errors';
import { settleNode } from '../../../src/domain/workflow-run';
import {
  WORKFLOW_STATES,
  canWorkflowTransition,
  isTerminalWorkflowState,
  type WorkflowState,
} from '../../../src/domain/workflow-state-machine';
import { thrownBy } from '../../support/thrown';
import { NOW, WorkflowDriver, batch, chain, group, job } from './workflow-fixtures';

describe('a chain', () => {
  it('enqueues only its first step, then each step when the one before it succeeds', () => {
    const wf = new WorkflowDriver(chain(job('order.validate'), job('payment.charge'), job('notification.send')));
    expect(wf.statuses()).toEqual({ enqueued: ['0'], waiting: ['1', '2'] });
    expect(wf.keys(wf.succeed('0').enqueue)).toEqual(['1']);
    expect(wf.state).toBe('running');
    expect(wf.keys(wf.succeed('1').enqueue)).toEqual(['2']);
    const last = wf.succeed('2');
    expect(last.enqueue).toEqual([]);
    expect(last.transitions).toEqual([{ from: 'running', to: 'completed', at: NOW }]);
    expect(wf.run.progress).toMatchObject({ completedCount: 3, failedCount: 0, settledCount: 3, completedAt: NOW });
  });

  it('stops at a failed step: every later step is cancelled at once and the chain fails', () => {
    const wf = new WorkflowDriver(chain(job('a.one'), job('a.two'), job('a.three'), job('a.four')));
    wf.start('0');
    wf.succeed('0');
    const failure = wf.fail('1');
    expect(failure.enqueue).toEqual([]);
    expect(wf.keys(failure.withdrawn)).toEqual(['2', '3']);
    expect(failure.transitions).toEqual([{ from: 'running', to: 'failed', at: NOW }]);
    expect(wf.statuses()).toEqual({ succeeded: ['0'], failed: ['1'], cancelled: ['2', '3'] });
    expect(wf.run.progress).toMatchObject({ completedCount: 1, failedCount: 1, settledCount: 4 });
  });
});

describe('a group', () => {
  it('enqueues every job at once and completes when all succeeded', () => {
    const wf = new WorkflowDriver(group(job('export.csv'), job('export.pdf'), job('export.xlsx')));
    expect(wf.statuses()).toEqual({ enqueued: ['0', '1', '2'] });
    wf.succeed('2');
    wf.succeed('0');
    expect(wf.state).toBe('running');
    wf.succeed('1');
    expect(wf.state).toBe('completed');
  });

  it('waits for all its jobs after one failed, then fails', () => {
    const wf = new WorkflowDriver(group(job('export.csv'), job('export.pdf'), job('export.xlsx')));
    expect(wf.fail('1').withdrawn).toEqual([]);
    expect(wf.state).toBe('running');
    wf.succeed('0');
    expect(wf.state).toBe('running');
    wf.succeed('2');
    expect(wf.state).toBe('failed');
    expect(wf.run.progress).toMatchObject({ completedCount: 2, failedCount: 1 });
  });
});

describe('a batch (the callback matrix of section 6.5)', () => {
  const everyCallback = { onComplete: 'batch.report', onSuccess: 'batch.celebrate', onFailure: 'batch.alert' };

  it.each([
    { outcome: 'all jobs succeeded', failing: [], fired: ['on_complete', 'on_success'], notTriggered: ['on_failure'] },
    { outcome: 'a job failed', failing: ['1'], fired: ['on_complete', 'on_failure'], notTriggered: ['on_success'] },
    { outcome: 'every job failed', failing: ['0', '1', '2'], fired: ['on_complete', 'on_failure'], notTriggered: ['on_success'] },
  ])('when $outcome, fires $fired once the last job settled, and not $notTriggered', ({ failing, fired, notTriggered }) => {
    const wf = new WorkflowDriver(batch([job('email.send'), job('email.send'), job('email.send')], everyCallback));
    const settle = (key: string) => (failing.includes(key) ? wf.fail(key) : wf.succeed(key));
    expect(settle('0').enqueue).toEqual([]);
    expect(settle('2').enqueue).toEqual([]);
    const last = settle('1');
    expect(wf.keys(last.enqueue)).toEqual(fired);
    expect(wf.keys(last.withdrawn)).toEqual(notTriggered);
    expect(wf.statuses().skipped).toEqual(notTriggered);
    for (const key of fired) wf.succeed(key);
    expect(wf.state).toBe('completed');
    // Exactly once: nothing settled later enqueues a callback again.
    expect(wf.advances.flatMap((advance) => wf.keys(advance.enqueue)).toSorted()).toEqual(fired.toSorted());
  });

  it.each([
    { callback: 'onComplete', key: 'on_complete', jobsFail: false, fires: true },
    { callback: 'onComplete', key: 'on_complete', jobsFail: true, fires: true },
    { callback: 'onSuccess', key: 'on_success', jobsFail: false, fires: true },
    { callback: 'onSuccess', key: 'on_success', jobsFail: true, fires: false },
    { callback: 'onFailure', key: 'on_failure', jobsFail: false, fires: false },
    { callback: 'onFailure', key: 'on_failure', jobsFail: true, fires: true },
  ])(
    'with only $callback, jobs failing: $jobsFail, fires: $fires, and the batch completes either way',
    ({ callback, key, jobsFail, fires }) => {
      const wf = new WorkflowDriver(batch([job('email.send'), job('email.send')], { [callback]: 'batch.callback' }));
      wf.succeed('0');
      const last = jobsFail ? wf.fail('1') : wf.succeed('1');
      expect(wf.keys(last.enqueue)).toEqual(fires ? [key] : []);
      expect(wf.state).toBe(fires ? 'running' : 'completed');
      if (fires) wf.succeed(key);
      // Section 8.3: a batch fails only when a triggered callback fails; a callback not triggered is not a failure.
      expect(wf.state).toBe('completed');
    },
  );

  it('fails when a triggered callback fails (section 9.5), even though every job succeeded', () => {
    const wf = new WorkflowDriver(batch([job('email.send')], everyCallback));
    wf.succeed('0');
    wf.succeed('on_complete');
    expect(wf.state).toBe('running');
    wf.fail('on_success');
    expect(wf.state).toBe('failed');
    expect(wf.run.progress).toMatchObject({ completedCount: 2, failedCount: 1, settledCount: 4 });
  });

  it('completes when a job failed but its callbacks succeeded (section 12.3, scenario B)', () => {
    const wf = new WorkflowDriver(batch([job('email.send'), job('email.send'), job('email.send')], everyCallback));
    wf.succeed('0');
    wf.succeed('1');
    wf.fail('2');
    wf.succeed('on_complete');
    wf.succeed('on_failure');
    expect(wf.state).toBe('completed');
    expect(wf.run.progress).toMatchObject({ completedCount: 4, failedCount: 1 });
  });
});

describe('nested workflows', () => {
  it('chain > group > chain: the outer chain advances when the group, and each inner chain, completed', () => {
    const wf = new WorkflowDriver(chain(job('data.extract'), group(chain(job('t.a1'), job('t.a2')), job('t.b')), job('data.load')));
    expect(wf.keys(wf.succeed('0').enqueue)).toEqual(['1.0.0', '1.1']);
    expect(wf.keys(wf.succeed('1.0.0').enqueue)).toEqual(['1.0.1']);
    expect(wf.succeed('1.1').enqueue).toEqual([]);
    expect(wf.keys(wf.succeed('1.0.1').enqueue)).toEqual(['2']);
    wf.succeed('2');
    expect(wf.state).toBe('completed');
  });

  it('chain > group > chain: a failed inner step cancels its chain, and the outer chain once the group has finished', () => {
    const wf = new WorkflowDriver(chain(job('data.extract'), group(chain(job('t.a1'), job('t.a2')), job('t.b')), job('data.load')));
    wf.succeed('0');
    const failure = wf.fail('1.0.0');
    expect(wf.keys(failure.withdrawn)).toEqual(['1.0.1']);
    // The group is still running (section 9.3): what follows it is not decided yet.
    expect(wf.status('2')).toBe('waiting');
    expect(wf.state).toBe('running');
    const last = wf.succeed('1.1');
    expect(wf.keys(last.withdrawn)).toEqual(['2']);
    expect(wf.state).toBe('failed');
  });

  it('group > batch: a batch that absorbed a job failure with its callback counts as completed', () => {
    const wf = new WorkflowDriver(group(batch([job('b.x'), job('b.y')], { onFailure: 'b.alert' }), job('other.job')));
    wf.fail('0.0');
    expect(wf.keys(wf.succeed('0.1').enqueue)).toEqual(['0.on_failure']);
    wf.succeed('1');
    wf.succeed('0.on_failure');
    expect(wf.state).toBe('completed');
  });

  it('batch > chain: a chain job that failed part-way triggers on_failure once every job settled', () => {
    const wf = new WorkflowDriver(batch([chain(job('c.p'), job('c.q')), job('c.r')], { onComplete: 'b.report', onFailure: 'b.alert' }));
    expect(wf.keys(wf.fail('0.0').withdrawn)).toEqual(['0.1']);
    expect(wf.keys(wf.succeed('1').enqueue)).toEqual(['on_complete', 'on_failure']);
  });

  it('a batch after a failed chain step never runs: its jobs and callbacks are cancelled, not fired on the cancellation', () => {
    const wf = new WorkflowDriver(
      chain(job('a.first'), batch([job('b.x'), job('b.y')], { onComplete: 'b.report', onFailure: 'b.alert' }), job('a.last')),
    );
    const failure = wf.fail('0');
    expect(failure.enqueue).toEqual([]);
    expect(wf.keys(failure.withdrawn)).toEqual(['1.0', '1.1', '1.on_complete', '1.on_failure', '2']);
    expect(wf.statuses()).toEqual({ failed: ['0'], cancelled: ['1.0', '1.1', '1.on_complete', '1.on_failure', '2'] });
    expect(wf.state).toBe('failed');
  });

  it('a batch after a failed group never runs either, once the group has finished (its gate is a join)', () => {
    const wf = new WorkflowDriver(chain(group(job('g.a'), job('g.b')), batch([job('b.x')], { onComplete: 'b.report' })));
    expect(wf.fail('0.0').withdrawn).toEqual([]);
    const last = wf.succeed('0.1');
    expect(last.enqueue).toEqual([]);
    expect(wf.keys(last.withdrawn)).toEqual(['1.0', '1.on_complete']);
    expect(wf.state).toBe('failed');
  });

  it('a chain continues after a batch whose only callback was not triggered (the batch completed, section 8.3)', () => {
    const wf = new WorkflowDriver(chain(batch([job('b.x'), job('b.y')], { onSuccess: 'b.celebrate' }), job('a.next')));
    wf.fail('0.0');
    const last = wf.succeed('0.1');
    expect(wf.keys(last.withdrawn)).toEqual(['0.on_success']);
    expect(wf.keys(last.enqueue)).toEqual(['1']);
  });

  it('a chain stops after a batch whose triggered callback failed', () => {
    const wf = new WorkflowDriver(chain(batch([job('b.x')], { onComplete: 'b.report' }), job('a.next')));
    wf.succeed('0.0');
    expect(wf.keys(wf.fail('0.on_complete').withdrawn)).toEqual(['1']);
    expect(wf.state).toBe('failed');
  });

  it('joins many-to-many steps through one node: the second group starts when every job of the first succeeded', () => {
    const wf = new WorkflowDriver(chain(group(job('g.a'), job('g.b'), job('g.c')), group(job('h.a'), job('h.b'))));
    const joins = wf.plan.nodes.filter((node) => node.role === 'join');
    expect(joins).toHaveLength(1);
    wf.succeed('0.0');
    wf.succeed('0.2');
    const last = wf.succeed('0.1');
    expect(wf.keys(last.enqueue)).toEqual(['1.0', '1.1']);
    expect(last.changed).toContain(wf.plan.jobCount);
    expect(wf.run.progress.settledCount).toBe(4);
    wf.succeed('1.0');
    wf.succeed('1.1');
    expect(wf.state).toBe('completed');
    expect(wf.run.progress).toMatchObject({ completedCount: 5, settledCount: 6 });
  });
});

describe('workflow states (section 8)', () => {
  it('allows exactly the transitions of section 8.2', () => {
    const allowed = WORKFLOW_STATES.flatMap((from) =>
      WORKFLOW_STATES.filter((to) => canWorkflowTransition(from, to)).map((to) => `${from}->${to}`),
    );
    expect(allowed).toEqual(['pending->running', 'pending->cancelled', 'running->completed', 'running->failed', 'running->cancelled']);
    expect(WORKFLOW_STATES.filter((state: WorkflowState) => isTerminalWorkflowState(state))).toEqual(['completed', 'failed', 'cancelled']);
  });

  it('is pending until its first job starts, then running, once', () => {
    const wf = new WorkflowDriver(group(job('g.a'), job('g.b')));
    expect(wf.state).toBe('pending');
    expect(wf.start('0').transitions).toEqual([{ from: 'pending', to: 'running', at: NOW }]);
    expect(wf.run.progress.startedAt).toBe(NOW);
    expect(wf.start('1').transitions).toEqual([]);
  });

  it('passes through running when a job settles without having started (it expired, or was cancelled)', () => {
    const wf = new WorkflowDriver(chain(job('a.only')));
    expect(wf.fail('0').transitions).toEqual([
      { from: 'pending', to: 'running', at: NOW },
      { from: 'running', to: 'failed', at: NOW },
    ]);
  });
});

describe('cancelling a workflow', () => {
  it('cancels its waiting and enqueued jobs (the store stops the active ones) and keeps the counts', () => {
    const wf = new WorkflowDriver(chain(group(job('g.a'), job('g.b')), job('a.next')));
    wf.start('0.0');
    wf.succeed('0.0');
    const cancel = wf.cancel();
    expect(wf.keys(cancel.withdrawn)).toEqual(['0.1', '1']);
    expect(cancel.transitions).toEqual([{ from: 'running', to: 'cancelled', at: NOW }]);
    expect(wf.statuses()).toEqual({ succeeded: ['0.0'], cancelled: ['0.1', '1'] });
    expect(wf.run.progress).toMatchObject({ completedCount: 1, failedCount: 0, settledCount: 3, completedAt: NOW });
  });

  it('may cancel a pending workflow', () => {
    const wf = new WorkflowDriver(group(job('g.a')));
    expect(wf.cancel().transitions).toEqual([{ from: 'pending', to: 'cancelled', at: NOW }]);
  });

  it.each(['completed', 'cancelled'])('refuses to cancel a %s workflow with invalid_state (409 in section 11.3)', (state) => {
    const wf = new WorkflowDriver(group(job('g.a')));
    if (state === 'completed') wf.succeed('0');
    else wf.cancel();
    const error = thrownBy(() => wf.cancel());
    expect(error).toBeInstanceOf(OjsError);
    expect(error).toMatchObject({ code: 'invalid_state', message: `workflow ${wf.plan.id} is ${state}: it cannot become cancelled` });
  });

  it('ignores a job settling after its workflow was cancelled', () => {
    const wf = new WorkflowDriver(group(job('g.a'), job('g.b')));
    wf.cancel();
    const late = wf.succeed('0');
    expect(late).toMatchObject({ enqueue: [], withdrawn: [], changed: [], transitions: [] });
    expect(wf.state).toBe('cancelled');
  });
});

describe('settling jobs', () => {
  it('lets an operator cancel a waiting step: what follows it is decided once the steps before it have settled', () => {
    const wf = new WorkflowDriver(chain(job('a.one'), job('a.two'), job('a.three')));
    const cancel = wf.fail('1');
    expect(cancel.withdrawn).toEqual([]);
    expect(wf.statuses()).toEqual({ enqueued: ['0'], failed: ['1'], waiting: ['2'] });
    const last = wf.succeed('0');
    expect(last.enqueue).toEqual([]);
    expect(wf.keys(last.withdrawn)).toEqual(['2']);
    expect(wf.state).toBe('failed');
  });

  it('changes nothing when a settled job settles again (a discarded job retried by hand)', () => {
    const wf = new WorkflowDriver(chain(job('a.one'), job('a.two')));
    wf.fail('0');
    const again = wf.succeed('0');
    expect(again).toMatchObject({ enqueue: [], changed: [], transitions: [] });
    expect(wf.status('0')).toBe('failed');
  });

  it('refuses what only a bug could ask: a join, an unknown node, the success of a node never enqueued', () => {
    const wf = new WorkflowDriver(chain(group(job('g.a'), job('g.b')), group(job('h.a'), job('h.b'))));
    const join = wf.plan.jobCount;
    expect(() => settleNode(wf.plan, wf.run, join, 'succeeded', NOW)).toThrow(/no job node/);
    expect(() => settleNode(wf.plan, wf.run, 99, 'failed', NOW)).toThrow(/no job node/);
    expect(() => wf.succeed('1.0')).toThrow(/without being enqueued/);
  });
});
