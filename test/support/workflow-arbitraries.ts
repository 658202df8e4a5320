import { array, boolean, constant, func, nat, oneof, tuple, type Arbitrary } from 'fast-check';
import type { WorkflowDefinition, WorkflowElement } from '../../src/domain/workflow-definition';
import { batch, chain, group, job } from '../unit/domain/workflow-fixtures';

/**
 * Random workflows for property tests: chains, groups and batches nested
 * up to `depth` levels, with one to three elements each, and the choices
 * that drive a run of one (which job settles next, and how).
 */

/** How deep the property tests nest workflows, below the domain's MAX_WORKFLOW_DEPTH: every definition generated is valid. */
export const WORKFLOW_NESTING = 4;

function elementOf(depth: number): Arbitrary<WorkflowElement> {
  const leaf = constant(job('w.job'));
  return depth === 0 ? leaf : oneof({ arbitrary: leaf, weight: 2 }, { arbitrary: workflowDefinitionOf(depth), weight: 1 });
}

/** A chain, group or batch (with at least one callback) nesting at most `depth` levels. */
export function workflowDefinitionOf(depth: number): Arbitrary<WorkflowDefinition> {
  const children = array(elementOf(depth - 1), { minLength: 1, maxLength: 3 });
  const callbacks = tuple(boolean(), boolean(), boolean())
    .filter((present) => present.some(Boolean))
    .map(([complete, success, failure]) => ({
      ...(complete ? { onComplete: 'w.complete' } : {}),
      ...(success ? { onSuccess: 'w.success' } : {}),
      ...(failure ? { onFailure: 'w.failure' } : {}),
    }));
  return oneof(
    children.map((steps) => chain(...steps)),
    children.map((jobs) => group(...jobs)),
    tuple(children, callbacks).map(([jobs, cbs]) => batch(jobs, cbs)),
  );
}

/** Whether the job at a path succeeds when it runs: mostly yes, so that long chains get somewhere. */
export const jobOutcomes = func(oneof({ arbitrary: constant(true), weight: 3 }, { arbitrary: constant(false), weight: 1 }));

/** The choices a run takes, one per step, reused in a cycle when the run is longer. */
export const runChoices = array(nat(), { minLength: 1, maxLength: 50 });
