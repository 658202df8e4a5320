import { NO_NODE, type UnfiredOutcome, type WorkflowPlan } from './workflow-plan';
import { assertWorkflowTransition, isTerminalWorkflowState, type WorkflowState } from './workflow-state-machine';

/**
 * Where a node is. waiting: not decided yet (its job, if created, waits
 * unavailable). enqueued: its job was made available; its job's own state
 * says whether it is pending or active. Then the outcomes: succeeded;
 * failed (its job was discarded after its retries, or cancelled by an
 * operator); cancelled (never ran: something it needed failed, or the
 * workflow was cancelled); skipped (never ran: a callback its batch's
 * outcome did not trigger). Joins go from waiting to succeeded or cancelled.
 *
 * waiting -> enqueued | cancelled | skipped | failed (an operator cancelled its job) | succeeded (a join)
 * enqueued -> succeeded | failed | cancelled (the workflow was cancelled)
 */
export type NodeStatus = 'waiting' | 'enqueued' | 'succeeded' | 'failed' | 'cancelled' | 'skipped';

export type NodeOutcome = 'succeeded' | 'failed';

/** What a store keeps per node: three flat fields. */
export interface NodeProgress {
  status: NodeStatus;
  /** Dependencies that have not settled yet. */
  remaining: number;
  /** Settled dependencies that failed or were cancelled. */
  failedDependencies: number;
}

/** What a store keeps per workflow (section 3.3 metadata; job_count is the plan's). Times are epoch milliseconds. */
export interface WorkflowProgress {
  state: WorkflowState;
  createdAt: number;
  startedAt?: number;
  completedAt?: number;
  /** Jobs that succeeded. */
  completedCount: number;
  /** Jobs that failed (after their retries, or cancelled by an operator). */
  failedCount: number;
  /** Nodes (joins included) that are settled: the workflow ends when all are. */
  settledCount: number;
  /** The first job node that failed: the step workflow.failed names. */
  firstFailed?: number;
}

export interface WorkflowRun {
  progress: WorkflowProgress;
  nodes: NodeProgress[];
}

export interface WorkflowTransition {
  from: WorkflowState;
  to: WorkflowState;
  at: number;
}

/** What one change of a run did, for a store to apply in the same atomic operation. */
export interface WorkflowAdvance {
  run: WorkflowRun;
  /** Job nodes whose jobs become available now (with their parent_results: parent-results.ts). */
  enqueue: number[];
  /** Job nodes that will never run now: their waiting (or, on cancel, live) jobs are cancelled. */
  withdrawn: number[];
  /** Every node whose progress changed, ascending. */
  changed: number[];
  /** The workflow's state changes, in order (events: workflow.started, .completed, .failed, .cancelled). */
  transitions: WorkflowTransition[];
}

export function isNodeSettled(status: NodeStatus): boolean {
  return status !== 'waiting' && status !== 'enqueued';
}

/** Whether a settled node counts as a failure for what depends on it. A skipped callback is neutral. */
export function isNodeFailure(status: NodeStatus): boolean {
  return status === 'failed' || status === 'cancelled';
}

/**
 * What node `index` does once all its dependencies have settled: runs, or
 * settles without running. A batch callback whose gate failed is cancelled
 * (its batch never started); otherwise the node runs when its rule holds for
 * the number of its dependencies that failed, and settles as `unfired` says
 * when it does not.
 */
export function nodeDecision(plan: WorkflowPlan, nodes: readonly NodeProgress[], index: number): 'run' | UnfiredOutcome {
  const node = plan.nodes[index];
  const progress = nodes[index];
  if (node === undefined || progress === undefined) throw new Error(`workflow ${plan.id} has no node ${index}`);
  const gate = node.gate === NO_NODE ? undefined : nodes[node.gate];
  if (gate !== undefined && isNodeFailure(gate.status)) return 'cancelled';
  const failed = progress.failedDependencies;
  const holds = node.rule === 'all_settled' || (node.rule === 'all_succeeded' ? failed === 0 : failed > 0);
  return holds ? 'run' : node.unfired;
}

/** A new workflow: pending, its nodes without dependencies enqueued (their jobs are created available). */
export function initialRun(plan: WorkflowPlan, now: number): WorkflowRun {
  return {
    progress: { state: 'pending', createdAt: now, completedCount: 0, failedCount: 0, settledCount: 0 },
    nodes: plan.nodes.map((node) => ({
      status: node.dependencies.length === 0 ? 'enqueued' : 'waiting',
      remaining: node.dependencies.length,
      failedDependencies: 0,
    })),
  };
}

/** A job of the workflow began executing: the first one makes it running (section 8.2). Otherwise nothing changes. */
export function startWorkflow(plan: WorkflowPlan, run: WorkflowRun, now: number): WorkflowAdvance {
  const change = new RunChange(plan, run);
  if (run.progress.state === 'pending') change.transition('running', now);
  return change.advance();
}

/**
 * The job of node `index` reached its outcome for the workflow: it succeeded,
 * or it failed for good (discarded after its retries, or cancelled by an
 * operator; a retryable failure is no outcome, section 9.1). Decides every
 * node this settles, transitively, and ends the workflow when all nodes are
 * settled. A node already settled is left as it is (a discarded job retried
 * by hand after its workflow moved on changes nothing).
 *
 * A job can settle without having started (it expired while available, an
 * operator cancelled it): a pending workflow then becomes running first, so
 * every workflow ends through running as section 8.2 requires.
 */
export function settleNode(plan: WorkflowPlan, run: WorkflowRun, index: number, outcome: NodeOutcome, now: number): WorkflowAdvance {
  const node = run.nodes[index];
  if (node === undefined || index >= plan.jobCount) throw new Error(`workflow ${plan.id} has no job node ${index}`);
  const change = new RunChange(plan, run);
  if (isNodeSettled(node.status)) return change.advance();
  if (node.status === 'waiting' && outcome === 'succeeded')
    throw new Error(`node ${index} of workflow ${plan.id} succeeded without being enqueued`);
  if (run.progress.state === 'pending') change.transition('running', now);
  change.settle(index, outcome);
  // A node failed while it waited tells its dependents only once its own dependencies have settled.
  // Nodes settled on the way are appended, and visited by the same loop.
  const toNotify = node.remaining === 0 ? [index] : [];
  for (const next of toNotify) {
    const failed = isNodeFailure(change.node(next).status);
    for (const dependent of plan.nodes[next]?.dependents ?? []) {
      const before = change.node(dependent);
      change.set(dependent, {
        ...before,
        remaining: before.remaining - 1,
        failedDependencies: before.failedDependencies + (failed ? 1 : 0),
      });
      if (before.remaining !== 1) continue;
      if (before.status === 'waiting') change.decide(dependent);
      if (isNodeSettled(change.node(dependent).status)) toNotify.push(dependent);
    }
  }
  if (change.progress.settledCount === plan.nodes.length) {
    change.transition(plan.exits.some((exit) => isNodeFailure(change.node(exit).status)) ? 'failed' : 'completed', now);
  }
  return change.advance();
}

/**
 * Cancels the workflow and every job of it that has not settled: waiting,
 * pending and, rather than letting them finish as section 11.3 would, active
 * ones too (the store stops them on their workers). Refused with
 * `invalid_state` when the workflow has already ended (409 in section 11.3).
 */
export function cancelWorkflow(plan: WorkflowPlan, run: WorkflowRun, now: number): WorkflowAdvance {
  assertWorkflowTransition(plan.id, run.progress.state, 'cancelled');
  const change = new RunChange(plan, run);
  run.nodes.forEach((node, index) => {
    if (!isNodeSettled(node.status)) change.settle(index, 'cancelled');
  });
  change.transition('cancelled', now);
  return change.advance();
}

/** A run being changed: copies what it changes, and records what a store must apply. */
class RunChange {
  readonly progress: WorkflowProgress;
  private readonly nodes: NodeProgress[];
  private readonly enqueue: number[] = [];
  private readonly withdrawn: number[] = [];
  private readonly changed = new Set<number>();
  private readonly transitions: WorkflowTransition[] = [];

  constructor(
    private readonly plan: WorkflowPlan,
    run: WorkflowRun,
  ) {
    this.progress = { ...run.progress };
    this.nodes = [...run.nodes];
  }

  node(index: number): NodeProgress {
    const node = this.nodes[index];
    if (node === undefined) throw new Error(`no node ${index}`);
    return node;
  }

  set(index: number, node: NodeProgress): void {
    this.nodes[index] = node;
    this.changed.add(index);
  }

  /** Node `index` has no unsettled dependency left: it runs, or settles as its plan says. */
  decide(index: number): void {
    const decision = nodeDecision(this.plan, this.nodes, index);
    if (decision !== 'run') {
      this.settle(index, decision);
    } else if (index >= this.plan.jobCount) {
      // A join holds no job: running is succeeding.
      this.settle(index, 'succeeded');
    } else {
      this.set(index, { ...this.node(index), status: 'enqueued' });
      this.enqueue.push(index);
    }
  }

  settle(index: number, status: 'succeeded' | 'failed' | 'cancelled' | 'skipped'): void {
    const isJob = index < this.plan.jobCount;
    this.set(index, { ...this.node(index), status });
    this.progress.settledCount += 1;
    if (isJob && status === 'succeeded') this.progress.completedCount += 1;
    if (isJob && status === 'failed') {
      this.progress.failedCount += 1;
      this.progress.firstFailed ??= index;
    }
    if (isJob && (status === 'cancelled' || status === 'skipped')) this.withdrawn.push(index);
  }

  transition(to: WorkflowState, at: number): void {
    const from = this.progress.state;
    assertWorkflowTransition(this.plan.id, from, to);
    this.progress.state = to;
    if (to === 'running') this.progress.startedAt = at;
    if (isTerminalWorkflowState(to)) this.progress.completedAt = at;
    this.transitions.push({ from, to, at });
  }

  advance(): WorkflowAdvance {
    return {
      run: { progress: this.progress, nodes: this.nodes },
      enqueue: this.enqueue,
      withdrawn: this.withdrawn,
      changed: [...this.changed].toSorted((a, b) => a - b),
      transitions: this.transitions,
    };
  }
}
