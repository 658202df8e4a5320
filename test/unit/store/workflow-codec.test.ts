import { assert, property, record } from 'fast-check';
import { createWorkflow } from '../../../src/domain/workflow-creation';
import { settleNode, type WorkflowRun } from '../../../src/domain/workflow-run';
import { decodeWorkflow, encodeWorkflowPlan, encodeWorkflowRun } from '../../../src/store/redis/workflow-codec';
import { propertyParameters } from '../../support/property';
import { thrownBy } from '../../support/thrown';
import { WORKFLOW_NESTING, jobOutcomes, runChoices, workflowDefinitionOf } from '../../support/workflow-arbitraries';
import { NOW, chain, job, jobCreation } from '../domain/workflow-fixtures';

/** A flat field, value list as HGETALL returns the hash it makes. */
function hashOf(flat: readonly string[]): Record<string, string> {
  const hash: Record<string, string> = {};
  for (let i = 0; i < flat.length; i += 2) hash[flat[i]!] = flat[i + 1]!;
  return hash;
}

function stored() {
  const { plan, jobs, run } = createWorkflow(chain(job('a.one'), job('a.two')), jobCreation());
  const jobIds = jobs.map((created) => created.id);
  return { plan, jobIds, run, planHash: hashOf(encodeWorkflowPlan(plan, jobIds)), runHash: hashOf(encodeWorkflowRun(run)) };
}

describe('the Redis encoding of workflows', () => {
  it('reads back every plan and run it writes, part-way through and at the end', () => {
    assert(
      property(record({ definition: workflowDefinitionOf(WORKFLOW_NESTING), succeeds: jobOutcomes, choices: runChoices }), (scenario) => {
        const { plan, jobs, run: initial } = createWorkflow(scenario.definition, jobCreation());
        const jobIds = jobs.map((created) => created.id);
        const planHash = hashOf(encodeWorkflowPlan(plan, jobIds));
        let run: WorkflowRun = initial;
        for (let step = 0; ; step++) {
          expect(decodeWorkflow(plan.id, planHash, hashOf(encodeWorkflowRun(run)))).toEqual({ plan, jobIds, run });
          const live = run.nodes.flatMap((node, index) => (node.status === 'enqueued' ? [index] : []));
          if (live.length === 0) break;
          const node = live[scenario.choices[step % scenario.choices.length]! % live.length]!;
          run = settleNode(plan, run, node, scenario.succeeds(plan.nodes[node]!.path) ? 'succeeded' : 'failed', NOW + step).run;
        }
      }),
      propertyParameters(100),
    );
  });

  it('finds no workflow in empty hashes', () => {
    expect(decodeWorkflow('wf-1', {}, {})).toBeUndefined();
  });

  it('refuses to read a workflow whose fields are missing or malformed, as a backend error', () => {
    const { plan, planHash, runHash } = stored();
    const { n1: _n1, ...withoutNode } = planHash;
    const broken: [Record<string, string>, Record<string, string>][] = [
      [withoutNode, runHash],
      [{ ...planHash, n0: 'all_succeeded|cancelled|-1|-1|0' }, runHash],
      [{ ...planHash, t0: 'x\x1f"0":' }, runHash],
      [planHash, { ...runHash, s1: 'sleeping,1,0' }],
      [planHash, { ...runHash, s1: 'waiting,1,0,7' }],
      [planHash, { ...runHash, state: 'paused' }],
      [{}, runHash],
    ];
    for (const [planFields, runFields] of broken) {
      expect(thrownBy(() => decodeWorkflow(plan.id, planFields, runFields))).toMatchObject({ code: 'backend_error' });
    }
  });

  it('refuses to write a plan its records could not hold', () => {
    const { plan, jobIds } = stored();
    const badKey = { ...plan, nodes: plan.nodes.map((node, i) => (i === 0 ? { ...node, key: 'a|b' } : node)) };
    const badText = { ...plan, templates: [{ extends: -1, pieces: ['#1'] }] };
    expect(thrownBy(() => encodeWorkflowPlan(badKey, jobIds))).toMatchObject({ code: 'backend_error' });
    expect(thrownBy(() => encodeWorkflowPlan(badText, jobIds))).toMatchObject({ code: 'backend_error' });
    expect(thrownBy(() => encodeWorkflowPlan(plan, jobIds.slice(1)))).toMatchObject({ code: 'backend_error' });
  });
});
