import { assembleParentResults, parentResultSources } from '../../../src/domain/parent-results';
import { createWorkflow } from '../../../src/domain/workflow-creation';
import { WorkflowDriver, batch, chain, group, job, jobCreation } from './workflow-fixtures';

describe('parent_results (section 7)', () => {
  it('gives chain step N the results of every earlier step, keyed by index (section 7.2)', () => {
    const wf = new WorkflowDriver(chain(job('order.validate'), job('payment.charge'), job('inventory.reserve')));
    expect(wf.parentResults('0')).toEqual({});
    wf.succeed('0', { order: { id: 'ord_123', total: 99.99 } });
    expect(wf.parentResults('1')).toEqual({ '0': { order: { id: 'ord_123', total: 99.99 } } });
    wf.succeed('1', { charge_id: 'ch_abc', amount: 99.99 });
    expect(wf.parentResults('2')).toEqual({
      '0': { order: { id: 'ord_123', total: 99.99 } },
      '1': { charge_id: 'ch_abc', amount: 99.99 },
    });
  });

  it('gives the step after a group the group as an object keyed by job index (section 7.3)', () => {
    const wf = new WorkflowDriver(
      chain(job('report.make'), group(job('export.csv'), job('export.pdf'), job('export.xlsx')), job('report.mail')),
    );
    wf.succeed('0', { report_id: 'rpt_456' });
    wf.succeed('1.0', { path: '/exports/rpt_456.csv' });
    wf.succeed('1.1', { path: '/exports/rpt_456.pdf' });
    wf.succeed('1.2', { path: '/exports/rpt_456.xlsx' });
    expect(wf.parentResults('2')).toEqual({
      '0': { report_id: 'rpt_456' },
      '1': {
        '0': { path: '/exports/rpt_456.csv' },
        '1': { path: '/exports/rpt_456.pdf' },
        '2': { path: '/exports/rpt_456.xlsx' },
      },
    });
  });

  it('gives the jobs of a group in a chain what the group gets: the earlier steps (section 10.3)', () => {
    const wf = new WorkflowDriver(chain(job('data.extract'), group(job('transform.csv'), job('transform.parquet')), job('data.load')));
    wf.succeed('0', { raw: 's3://raw/1' });
    expect(wf.parentResults('1.0')).toEqual({ '0': { raw: 's3://raw/1' } });
    expect(wf.parentResults('1.1')).toEqual({ '0': { raw: 's3://raw/1' } });
  });

  it('gives every batch callback all the jobs results keyed by index (section 7.4)', () => {
    const wf = new WorkflowDriver(
      batch([job('email.send'), job('email.send'), job('email.send')], { onComplete: 'batch.report', onSuccess: 'batch.ok' }),
    );
    wf.succeed('0', { message_id: 'msg_001', status: 'sent' });
    wf.succeed('1', { message_id: 'msg_002', status: 'sent' });
    wf.succeed('2', { message_id: null, status: 'bounced' });
    const expected = {
      '0': { message_id: 'msg_001', status: 'sent' },
      '1': { message_id: 'msg_002', status: 'sent' },
      '2': { message_id: null, status: 'bounced' },
    };
    expect(wf.parentResults('on_complete')).toEqual(expected);
    expect(wf.parentResults('on_success')).toEqual(expected);
  });

  it('gives null for a job without a result: one that failed', () => {
    const wf = new WorkflowDriver(batch([job('email.send'), job('email.send')], { onFailure: 'batch.alert' }));
    wf.succeed('0', { message_id: 'msg_001' });
    wf.fail('1');
    expect(wf.parentResults('on_failure')).toEqual({ '0': { message_id: 'msg_001' }, '1': null });
  });

  it('gives the step after a batch its jobs by index and its callbacks by name, null when not triggered', () => {
    const wf = new WorkflowDriver(
      chain(job('a.first'), batch([job('b.x'), job('b.y')], { onComplete: 'b.report', onFailure: 'b.alert' }), job('a.last')),
    );
    wf.succeed('0', 'first');
    wf.succeed('1.0', 'x');
    wf.succeed('1.1', 'y');
    wf.succeed('1.on_complete', { sent: 2 });
    expect(wf.parentResults('2')).toEqual({ '0': 'first', '1': { '0': 'x', '1': 'y', on_complete: { sent: 2 }, on_failure: null } });
  });

  it('gives the steps of a nested chain after its first the results of that chain only', () => {
    const wf = new WorkflowDriver(chain(job('a.first'), group(chain(job('p.one'), job('p.two')), job('q.only'))));
    wf.succeed('0', 'outer');
    expect(wf.parentResults('1.0.0')).toEqual({ '0': 'outer' });
    wf.succeed('1.0.0', 'inner');
    expect(wf.parentResults('1.0.1')).toEqual({ '0': 'inner' });
  });

  it('gives the first jobs of a workflow an empty object', () => {
    const wf = new WorkflowDriver(group(job('g.a'), chain(job('c.one'), job('c.two'))));
    expect(wf.parentResults('0')).toEqual({});
    expect(wf.parentResults('1.0')).toEqual({});
  });

  it('keeps the templates of a long chain linear in its length, each step extending the one before', () => {
    const steps = Array.from({ length: 1_000 }, (_, i) => job(`s.n${i}`));
    const { plan } = createWorkflow(chain(...steps), jobCreation());
    const pieces = plan.templates.reduce((sum, template) => sum + template.pieces.length, 0);
    expect(pieces).toBe(2 * 999);
    expect(parentResultSources(plan, 999)).toEqual(Array.from({ length: 999 }, (_, i) => i));
  });
});

describe('bounding parent_results', () => {
  const { plan } = createWorkflow(chain(job('a.zero'), job('a.one'), job('a.two'), job('a.three')), jobCreation());
  const stored = (json: string, bytes: number) => ({ json, bytes });
  const results = new Map([
    [0, stored('"zero"', 10)],
    [1, stored('"one"', 100)],
    [2, stored('"two"', 50)],
  ]);

  it('inlines every result when they fit', () => {
    expect(assembleParentResults(plan, 3, (node) => results.get(node), 160)).toBe('{"0":"zero","1":"one","2":"two"}');
  });

  it('inlines the nearest results first and stands in for those that do not fit, with the step to read them from', () => {
    expect(assembleParentResults(plan, 3, (node) => results.get(node), 70)).toBe(
      '{"0":"zero","1":{"result_omitted":true,"step":"1","result_size_bytes":100},"2":"two"}',
    );
    expect(JSON.parse(assembleParentResults(plan, 3, (node) => results.get(node), 0))).toEqual({
      '0': { result_omitted: true, step: '0', result_size_bytes: 10 },
      '1': { result_omitted: true, step: '1', result_size_bytes: 100 },
      '2': { result_omitted: true, step: '2', result_size_bytes: 50 },
    });
  });
});
