import { OjsError } from '../../../src/domain/errors';
import { createWorkflow } from '../../../src/domain/workflow-creation';
import {
  MAX_WORKFLOW_DEPTH,
  MAX_WORKFLOW_JOBS,
  WORKFLOW_NAME_MAX_CHARS,
  type WorkflowDefinition,
  type WorkflowElement,
} from '../../../src/domain/workflow-definition';
import type { WorkflowPlan } from '../../../src/domain/workflow-plan';
import { thrownBy } from '../../support/thrown';
import { NOW, batch, chain, group, job, jobCreation, uuid } from './workflow-fixtures';

/** Each node as "key <- dependency keys (rule)", for reading a plan at a glance. */
function edges(plan: WorkflowPlan): string[] {
  const label = (index: number): string => {
    const node = plan.nodes[index];
    return node?.role === 'join' ? `join@${node.path}` : (node?.key ?? '?');
  };
  return plan.nodes.map((node, index) => {
    const deps = node.dependencies.map(label).join(',');
    return deps === '' ? label(index) : `${label(index)} <- ${deps} (${node.rule})`;
  });
}

function refusal(definition: WorkflowDefinition): OjsError {
  const error = thrownBy(() => createWorkflow(definition, jobCreation()));
  if (!(error instanceof OjsError)) throw error;
  return error;
}

/** A chain nesting `levels` workflows, alternating chains and groups, around one job. */
function nested(levels: number): WorkflowDefinition {
  let element: WorkflowElement = job('deep.job');
  for (let level = levels; level >= 1; level--) element = level % 2 === 1 ? chain(element) : group(element);
  if (element.kind === 'job') throw new Error('levels must be at least 1');
  return element;
}

describe('compiling a workflow into a plan', () => {
  it('makes a chain a line of steps, each after the one before', () => {
    const { plan } = createWorkflow(chain(job('a.one'), job('a.two'), job('a.three')), jobCreation());
    expect(edges(plan)).toEqual(['0', '1 <- 0 (all_succeeded)', '2 <- 1 (all_succeeded)']);
    expect(plan.nodes.map((node) => node.path)).toEqual(['steps[0]', 'steps[1]', 'steps[2]']);
    expect(plan.nodes.map((node) => node.role)).toEqual(['step', 'step', 'step']);
    expect(plan).toMatchObject({ type: 'chain', name: '', jobCount: 3, exits: [2] });
  });

  it('makes a group jobs without dependencies, all of them exits', () => {
    const { plan } = createWorkflow({ ...group(job('x.a'), job('x.b')), name: 'exports' }, jobCreation());
    expect(edges(plan)).toEqual(['0', '1']);
    expect(plan).toMatchObject({ type: 'group', name: 'exports', exits: [0, 1] });
    expect(plan.nodes.map((node) => node.path)).toEqual(['jobs[0]', 'jobs[1]']);
  });

  it('makes batch callbacks wait for every job, each with its rule, and the callbacks the exits', () => {
    const { plan } = createWorkflow(
      batch([job('b.x'), job('b.y')], { onComplete: 'c.all', onSuccess: 'c.ok', onFailure: 'c.ko' }),
      jobCreation(),
    );
    expect(edges(plan)).toEqual([
      '0',
      '1',
      'on_complete <- 0,1 (all_settled)',
      'on_success <- 0,1 (all_succeeded)',
      'on_failure <- 0,1 (any_failed)',
    ]);
    expect(plan.nodes.slice(2).map((node) => [node.path, node.role, node.unfired, node.gate])).toEqual([
      ['callbacks.on_complete', 'on_complete', 'skipped', -1],
      ['callbacks.on_success', 'on_success', 'skipped', -1],
      ['callbacks.on_failure', 'on_failure', 'skipped', -1],
    ]);
    expect(plan.exits).toEqual([2, 3, 4]);
  });

  it('nests chain > group > chain: the group jobs start from the step before, the step after waits for every exit', () => {
    const { plan } = createWorkflow(chain(job('extract'), group(chain(job('t.a1'), job('t.a2')), job('t.b')), job('load')), jobCreation());
    expect(edges(plan)).toEqual([
      '0',
      '1.0.0 <- 0 (all_succeeded)',
      '1.0.1 <- 1.0.0 (all_succeeded)',
      '1.1 <- 0 (all_succeeded)',
      '2 <- 1.0.1,1.1 (all_succeeded)',
    ]);
    expect(plan.nodes.map((node) => node.path)).toEqual([
      'steps[0]',
      'steps[1].jobs[0].steps[0]',
      'steps[1].jobs[0].steps[1]',
      'steps[1].jobs[1]',
      'steps[2]',
    ]);
  });

  it('nests group > batch and batch > chain, a callback depending on the chain exit', () => {
    const { plan } = createWorkflow(group(batch([chain(job('p'), job('q')), job('r')], { onFailure: 'alert' }), job('s')), jobCreation());
    expect(edges(plan)).toEqual(['0.0.0', '0.0.1 <- 0.0.0 (all_succeeded)', '0.1', '0.on_failure <- 0.0.1,0.1 (any_failed)', '1']);
    expect(plan.exits).toEqual([3, 4]);
  });

  it('gives a batch after a step the step as its gate, and one after several exits a join', () => {
    const single = createWorkflow(chain(job('first'), batch([job('x')], { onComplete: 'done' })), jobCreation()).plan;
    expect(single.nodes[2]?.gate).toBe(0);
    const { plan } = createWorkflow(
      chain(group(job('g.a'), job('g.b')), batch([job('x'), job('y')], { onComplete: 'done' })),
      jobCreation(),
    );
    expect(edges(plan)).toEqual([
      '0.0',
      '0.1',
      '1.0 <- join@steps[1] (all_succeeded)',
      '1.1 <- join@steps[1] (all_succeeded)',
      '1.on_complete <- 1.0,1.1 (all_settled)',
      'join@steps[1] <- 0.0,0.1 (all_succeeded)',
    ]);
    expect(plan.nodes[4]?.gate).toBe(5);
    expect(plan.jobCount).toBe(5);
    expect(plan.nodes[0]?.dependents).toEqual([5]);
  });

  it('keeps plans linear in their size: a group after a group takes as many edges as jobs', () => {
    const wide = (n: number) => group(...Array.from({ length: n }, (_, i) => job(`w.j${i}`)));
    const { plan } = createWorkflow(chain(wide(400), wide(400)), jobCreation());
    const edgeCount = plan.nodes.reduce((sum, node) => sum + node.dependencies.length, 0);
    expect(edgeCount).toBe(800);
  });
});

describe('creating a workflow', () => {
  it('builds a job per node: available when it has no dependencies, pending otherwise', () => {
    const created = createWorkflow(chain(job('a.one', { args: [1] }), group(job('b.x'), job('b.y'))), jobCreation());
    expect(created.plan.id).toBe(uuid(1));
    expect(created.jobs.map((j) => [j.type, j.state, j.id])).toEqual([
      ['a.one', 'available', uuid(2)],
      ['b.x', 'pending', uuid(3)],
      ['b.y', 'pending', uuid(4)],
    ]);
    expect(created.jobs[0]?.args).toEqual([1]);
    expect(created.run).toEqual({
      progress: { state: 'pending', createdAt: NOW, completedCount: 0, failedCount: 0, settledCount: 0 },
      nodes: [
        { status: 'enqueued', remaining: 0, failedDependencies: 0 },
        { status: 'waiting', remaining: 1, failedDependencies: 0 },
        { status: 'waiting', remaining: 1, failedDependencies: 0 },
      ],
    });
  });

  it('refuses an empty chain, group or batch, and a batch without callbacks, naming each field', () => {
    const error = refusal(chain(job('a.one'), group(), batch([job('b.x')], {}), chain(), batch([], { onComplete: 'c.done' })));
    expect(error.code).toBe('invalid_payload');
    expect(error.fieldViolations.map((v) => v.field)).toEqual(['steps[1].jobs', 'steps[2].callbacks', 'steps[3].steps', 'steps[4].jobs']);
  });

  it('names the fields of bad jobs by their path, every problem at once', () => {
    const error = refusal(
      chain(job('a.one'), group(job('Not A Type'), job('b.ok', { queue: 'BAD QUEUE' })), batch([job('c.x')], { onFailure: '' })),
    );
    expect(error.fieldViolations.map((v) => v.field)).toEqual([
      'steps[1].jobs[0].type',
      'steps[1].jobs[1].queue',
      'steps[2].callbacks.on_failure.type',
    ]);
    expect(error.message).toMatch(/^steps\[1\]\.jobs\[0\]\.type: /);
  });

  it('refuses a job id used twice in one workflow', () => {
    const id = uuid(99);
    const error = refusal(group(job('a.one', { id }), chain(job('a.two'), job('a.three', { id }))));
    expect(error.fieldViolations).toEqual([{ field: 'jobs[1].steps[1].id', description: 'is also the id of jobs[0]' }]);
  });

  it('refuses a name that is too long or holds control characters', () => {
    const error = refusal({
      ...chain(job('a.one'), { ...group(job('b.x')), name: 'bad\nname' }),
      name: 'x'.repeat(WORKFLOW_NAME_MAX_CHARS + 1),
    });
    expect(error.fieldViolations.map((v) => v.field)).toEqual(['name', 'steps[1].name']);
  });

  it(`accepts ${MAX_WORKFLOW_JOBS} jobs, callbacks included, and refuses one more with invalid_request`, () => {
    const jobs = (n: number) => Array.from({ length: n }, (_, i) => job(`j.n${i}`));
    expect(
      createWorkflow(batch(jobs(MAX_WORKFLOW_JOBS - 3), { onComplete: 'c', onSuccess: 's', onFailure: 'f' }), jobCreation()).plan.jobCount,
    ).toBe(MAX_WORKFLOW_JOBS);
    const error = refusal(chain(job('first'), group(...jobs(MAX_WORKFLOW_JOBS))));
    expect(error).toMatchObject({ code: 'invalid_request', metadata: { field: 'steps' } });
    expect(error.message).toBe(
      `steps: a workflow may hold at most ${MAX_WORKFLOW_JOBS} jobs, callbacks and nested jobs included; this one holds 1001`,
    );
  });

  it(`accepts ${MAX_WORKFLOW_DEPTH} levels of nesting and refuses one more, naming the workflow nested too deep`, () => {
    expect(createWorkflow(nested(MAX_WORKFLOW_DEPTH), jobCreation()).plan.jobCount).toBe(1);
    const error = refusal(nested(MAX_WORKFLOW_DEPTH + 1));
    expect(error.code).toBe('invalid_payload');
    expect(error.fieldViolations).toEqual([
      { field: 'steps[0].jobs[0].steps[0].jobs[0].steps[0]', description: `nests workflows deeper than ${MAX_WORKFLOW_DEPTH} levels` },
    ]);
  });

  it('refuses a workflow nested thousands of levels deep without exhausting the stack', () => {
    expect(refusal(nested(20_000)).fieldViolations).toHaveLength(1);
  });
});
