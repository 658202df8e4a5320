import { assert, boolean, integer, option, property, record } from 'fast-check';
import { assembleParentResults, type StoredResult } from '../../../src/domain/parent-results';
import { createWorkflow } from '../../../src/domain/workflow-creation';
import type { BatchDefinition, WorkflowDefinition, WorkflowElement } from '../../../src/domain/workflow-definition';
import type { WorkflowPlan } from '../../../src/domain/workflow-plan';
import {
  cancelWorkflow,
  isNodeFailure,
  isNodeSettled,
  settleNode,
  startWorkflow,
  type NodeStatus,
  type WorkflowAdvance,
  type WorkflowRun,
} from '../../../src/domain/workflow-run';
import { canWorkflowTransition, isTerminalWorkflowState, type WorkflowState } from '../../../src/domain/workflow-state-machine';
import { propertyParameters } from '../../support/property';
import { WORKFLOW_NESTING, jobOutcomes, runChoices, workflowDefinitionOf } from '../../support/workflow-arbitraries';
import { NOW, jobCreation } from './workflow-fixtures';

/**
 * Random nested workflows, their jobs settled in random orders with
 * outcomes fixed per job, checked against a direct recursive reading of
 * the spec's rules (sections 4 to 9), written here independently of the plan.
 */

interface Expected {
  state: 'completed' | 'failed';
  /** The status of every job, by path. */
  statuses: Map<string, NodeStatus>;
  /** The parent_results of every job that runs, by path. */
  parents: Map<string, unknown>;
}

/** The spec's rules, evaluated recursively: what each job ends as, what each receives, and how the workflow ends. */
function reference(definition: WorkflowDefinition, succeeds: (path: string) => boolean): Expected {
  const statuses = new Map<string, NodeStatus>();
  const parents = new Map<string, unknown>();
  const at = (path: string, name: string): string => (path === '' ? name : `${path}.${name}`);

  const runJob = (path: string, started: boolean, input: unknown): { ok: boolean; result: unknown } => {
    if (!started) {
      statuses.set(path, 'cancelled');
      return { ok: false, result: null };
    }
    parents.set(path, input);
    const ok = succeeds(path);
    statuses.set(path, ok ? 'succeeded' : 'failed');
    return { ok, result: ok ? { p: path } : null };
  };

  const evaluate = (element: WorkflowElement, path: string, started: boolean, input: unknown): { ok: boolean; result: unknown } => {
    switch (element.kind) {
      case 'job':
        return runJob(path, started, input);
      case 'chain': {
        // Section 4.3: each step runs only when the one before it succeeded; step N gets steps 0..N-1 (7.2).
        const results: Record<string, unknown> = {};
        let ok = started;
        element.steps.forEach((step, i) => {
          const outcome = evaluate(step, at(path, `steps[${i}]`), ok, i === 0 ? input : { ...results });
          results[String(i)] = outcome.result;
          ok = ok && outcome.ok;
        });
        return { ok, result: results };
      }
      case 'group': {
        // Section 5.3: every job runs; the group succeeds when all did.
        const results: Record<string, unknown> = {};
        let ok = started;
        element.jobs.forEach((child, i) => {
          const outcome = evaluate(child, at(path, `jobs[${i}]`), started, input);
          results[String(i)] = outcome.result;
          ok = ok && outcome.ok;
        });
        return { ok, result: results };
      }
      case 'batch':
        return evaluateBatch(element, path, started, input);
    }
  };

  const evaluateBatch = (element: BatchDefinition, path: string, started: boolean, input: unknown): { ok: boolean; result: unknown } => {
    const results: Record<string, unknown> = {};
    let anyFailed = false;
    element.jobs.forEach((child, i) => {
      const outcome = evaluate(child, at(path, `jobs[${i}]`), started, input);
      results[String(i)] = outcome.result;
      anyFailed ||= !outcome.ok;
    });
    const jobResults = { ...results };
    // Sections 6.4, 6.5, 8.3: on_complete always, on_success when none failed, on_failure when one did;
    // the batch fails only when a triggered callback fails.
    let ok = started;
    const triggers = { on_complete: true, on_success: !anyFailed, on_failure: anyFailed };
    for (const [kind, field] of [
      ['on_complete', 'onComplete'],
      ['on_success', 'onSuccess'],
      ['on_failure', 'onFailure'],
    ] as const) {
      if (element.callbacks[field] === undefined) continue;
      const callbackPath = at(path, `callbacks.${kind}`);
      results[kind] = null;
      if (started && !triggers[kind]) {
        statuses.set(callbackPath, 'skipped');
        continue;
      }
      const outcome = runJob(callbackPath, started, jobResults);
      results[kind] = outcome.result;
      ok = ok && outcome.ok;
    }
    return { ok, result: results };
  };

  const { ok } = evaluate(definition, '', true, {});
  return { state: ok ? 'completed' : 'failed', statuses, parents };
}

/** Throws, with what differs, unless `actual` and `expected` are the same JSON: the checks a run makes between tests' expects. */
function same(what: string, actual: unknown, expected: unknown): void {
  const [a, e] = [JSON.stringify(actual), JSON.stringify(expected)];
  if (a !== e) throw new Error(`${what}: got ${a}, expected ${e}`);
}

/** Drives a run as a store would, checking after every change what must always hold. */
class Simulation {
  readonly enqueued = new Set<number>();
  readonly parents = new Map<number, string>();
  readonly results = new Map<number, StoredResult>();
  private lastState: WorkflowState = 'pending';

  constructor(
    readonly plan: WorkflowPlan,
    public run: WorkflowRun,
  ) {
    run.nodes.forEach((node, index) => {
      if (node.status === 'enqueued') this.record(index);
    });
  }

  waitingJobs(): number[] {
    return this.run.nodes.slice(0, this.plan.jobCount).flatMap((node, index) => (node.status === 'waiting' ? [index] : []));
  }

  live(): number[] {
    return [...this.enqueued].filter((index) => this.run.nodes[index]?.status === 'enqueued');
  }

  apply(advance: WorkflowAdvance): void {
    const before = this.run;
    this.run = advance.run;
    const changed = this.run.nodes.flatMap((node, index) => (JSON.stringify(node) === JSON.stringify(before.nodes[index]) ? [] : [index]));
    same('changed nodes', advance.changed, changed);
    // The jobs to make available and to cancel are exactly the job nodes that were decided or stopped. Both lists
    // are in the order the change reached the nodes (lib/workflows.lua keeps the same order), not always the plan's:
    // after an operator cancelled a waiting job, one seed's change decided node 3 before node 2.
    const jobsNow = (from: NodeStatus[], to: NodeStatus[]): number[] =>
      changed.filter(
        (index) => index < this.plan.jobCount && from.includes(before.nodes[index]!.status) && to.includes(this.run.nodes[index]!.status),
      );
    same(
      'enqueued jobs',
      advance.enqueue.toSorted((a, b) => a - b),
      jobsNow(['waiting'], ['enqueued']),
    );
    same(
      'withdrawn jobs',
      advance.withdrawn.toSorted((a, b) => a - b),
      jobsNow(['waiting', 'enqueued'], ['cancelled', 'skipped']),
    );
    for (const index of advance.enqueue) {
      // Enqueued once, only when every dependency has settled and its batch started.
      const node = this.plan.nodes[index]!;
      const unsettled = node.dependencies.filter((dependency) => !isNodeSettled(this.run.nodes[dependency]!.status));
      if (this.enqueued.has(index) || unsettled.length > 0)
        throw new Error(`node ${node.path} enqueued twice or before ${unsettled.join()}`);
      if (node.gate >= 0 && isNodeFailure(this.run.nodes[node.gate]!.status))
        throw new Error(`callback ${node.path} of a batch never started`);
      this.record(index);
    }
    for (const { from, to } of advance.transitions) {
      if (from !== this.lastState || !canWorkflowTransition(from, to))
        throw new Error(`transition ${from} -> ${to} after ${this.lastState}`);
      this.lastState = to;
    }
    this.checkCounts();
  }

  private record(index: number): void {
    this.enqueued.add(index);
    this.parents.set(
      index,
      assembleParentResults(this.plan, index, (node) => this.results.get(node)),
    );
  }

  private checkCounts(): void {
    const jobs = this.run.nodes.slice(0, this.plan.jobCount);
    const { progress } = this.run;
    const allSettled = this.run.nodes.every((node) => isNodeSettled(node.status));
    same(
      'counts',
      [progress.completedCount, progress.failedCount, progress.settledCount === this.run.nodes.length],
      [jobs.filter((node) => node.status === 'succeeded').length, jobs.filter((node) => node.status === 'failed').length, allSettled],
    );
    // The workflow ends exactly when every node has settled.
    same(`terminal state ${progress.state}`, isTerminalWorkflowState(progress.state), allSettled);
  }
}

interface Scenario {
  definition: WorkflowDefinition;
  succeeds: (path: string) => boolean;
  choices: number[];
  /** Cancel the workflow at this step (if it has not ended by then). */
  cancelAt?: number | undefined;
  /** Let an operator cancel jobs that are still waiting, now and then. */
  operatorCancels?: boolean;
}

/** Runs a scenario to its end: every live job settles, in the order the choices say, unless the workflow is cancelled first. */
function simulate({ definition, succeeds, choices, cancelAt, operatorCancels = false }: Scenario): {
  simulation: Simulation;
  cancelled: boolean;
} {
  const created = createWorkflow(definition, jobCreation());
  const { plan } = created;
  const simulation = new Simulation(plan, created.run);
  for (let step = 0; simulation.live().length > 0; step++) {
    if (step === cancelAt) {
      simulation.apply(cancelWorkflow(plan, simulation.run, NOW));
      return { simulation, cancelled: true };
    }
    const choice = choices[step % choices.length] ?? 0;
    const waiting = simulation.waitingJobs();
    if (operatorCancels && choice % 5 === 0 && waiting.length > 0) {
      simulation.apply(settleNode(plan, simulation.run, waiting[choice % waiting.length]!, 'failed', NOW));
      continue;
    }
    const live = simulation.live();
    const index = live[choice % live.length]!;
    if (choice % 3 !== 0) simulation.apply(startWorkflow(plan, simulation.run, NOW));
    const path = plan.nodes[index]!.path;
    if (succeeds(path)) {
      const json = JSON.stringify({ p: path });
      simulation.results.set(index, { json, bytes: json.length });
    }
    simulation.apply(settleNode(plan, simulation.run, index, succeeds(path) ? 'succeeded' : 'failed', NOW));
  }
  return { simulation, cancelled: false };
}

describe('workflow runs (property)', () => {
  it('enqueue each job once, after its dependencies, and end when all nodes settle, as the spec rules say', () => {
    assert(
      property(record({ definition: workflowDefinitionOf(WORKFLOW_NESTING), succeeds: jobOutcomes, choices: runChoices }), (scenario) => {
        const { simulation } = simulate(scenario);
        const { plan, run } = simulation;
        const expected = reference(scenario.definition, scenario.succeeds);
        expect(run.progress.state).toBe(expected.state);
        const statuses = new Map(plan.nodes.slice(0, plan.jobCount).map((node, index) => [node.path, run.nodes[index]!.status]));
        expect(statuses).toEqual(expected.statuses);
        const parents = new Map([...simulation.parents].map(([index, json]) => [plan.nodes[index]!.path, JSON.parse(json) as unknown]));
        expect(parents).toEqual(expected.parents);
      }),
      propertyParameters(300),
    );
  });

  it('keep those guarantees when the workflow is cancelled, or an operator cancels waiting jobs, part-way', () => {
    const scenario = record({
      definition: workflowDefinitionOf(WORKFLOW_NESTING),
      succeeds: jobOutcomes,
      choices: runChoices,
      cancelAt: option(integer({ min: 0, max: 30 }), { nil: undefined }),
      operatorCancels: boolean(),
    });
    assert(
      property(scenario, (generated) => {
        const { simulation, cancelled } = simulate(generated);
        // Nothing is left waiting once nothing runs, and the workflow has ended.
        expect(simulation.run.nodes.filter((node) => !isNodeSettled(node.status))).toEqual([]);
        expect(isTerminalWorkflowState(simulation.run.progress.state)).toBe(true);
        expect(simulation.run.progress.state === 'cancelled').toBe(cancelled);
      }),
      propertyParameters(300),
    );
  });
});
