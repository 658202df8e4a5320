import type { CallbackKind, WorkflowType } from './workflow-definition';

/**
 * A workflow compiled into a flat graph of nodes, so that a store advances
 * it with one generic rule and never needs to know what a chain, group or
 * batch is (workflow-compile.ts says how each maps onto nodes; workflow-run.ts
 * applies the rule). The plan never changes after creation.
 *
 * The rule: a node is decided once, when the last of its dependencies has
 * settled (is terminal). Its firing rule then says whether it runs (its job
 * becomes available) or not; a node that does not run settles at once, as
 * `unfired` says, and may decide its own dependents in turn. A node tells its
 * dependents it settled only once all of its own dependencies have settled,
 * so settlements travel the graph in dependency order.
 */
export interface WorkflowPlan {
  id: string;
  type: WorkflowType;
  /** The workflow's name; "" when it has none. */
  name: string;
  /**
   * Job nodes first, in definition order (chain steps, group and batch jobs,
   * then each batch's callbacks), so node i < jobCount is the workflow's
   * i-th job; joins follow.
   */
  nodes: PlanNode[];
  jobCount: number;
  /** The parent_results templates that nodes refer to by index. */
  templates: ParentResultsTemplate[];
  /** The nodes whose outcomes decide the workflow's: it fails when one of them failed (see workflow-run.ts). */
  exits: number[];
}

/**
 * `job`: a chain step, a group or batch job, or a batch callback.
 * `join`: a node without a job that stands for "everything before this step
 * succeeded" where many nodes lead to many (a group after a group), so that
 * the plan has as many edges as nodes rather than their product, and a batch
 * has one node deciding whether it started. A join that fires succeeds at once.
 */
export type NodeRole = 'step' | 'job' | CallbackKind | 'join';

/**
 * When a decided node runs, given how many of its dependencies failed:
 * `all_succeeded` (chain steps, joins, on_success) when none did;
 * `all_settled` (on_complete) always; `any_failed` (on_failure) when one did.
 */
export type FiringRule = 'all_succeeded' | 'all_settled' | 'any_failed';

/**
 * What a node that does not run becomes. `cancelled` carries the failure
 * that stopped it to its dependents (a chain step after a failed step);
 * `skipped` is neutral (a callback the batch's outcome did not trigger: the
 * batch still completes, section 8.3).
 */
export type UnfiredOutcome = 'cancelled' | 'skipped';

export interface PlanNode {
  /** Where the element is in the definition, as validation names fields: "steps[1].jobs[0]", "callbacks.on_failure". */
  path: string;
  /** A short display key of the same place: "1.0", "on_failure", "2.on_complete". */
  key: string;
  role: NodeRole;
  /** The job type; "" for a join. */
  type: string;
  /** Nodes that must settle before this one is decided. Empty: available at creation. */
  dependencies: number[];
  /** Nodes that list this one in their dependencies. */
  dependents: number[];
  rule: FiringRule;
  unfired: UnfiredOutcome;
  /**
   * For a batch callback: the node that decided whether the batch started at
   * all (-1 when it started at creation). When that node failed, the batch's
   * jobs never ran and its callbacks are cancelled rather than fired on their
   * cancellation.
   */
  gate: number;
  /** Index in `templates` of this node's parent_results, -1 for `{}`. */
  parentResults: number;
}

/** Literal JSON text, or the index of the node whose result goes here. */
export type ResultPiece = string | number;

/**
 * A node's parent_results object, as pieces a store concatenates with the
 * stored result texts, so it never parses JSON. A chain step's template
 * extends its predecessor's with one entry, which keeps a long chain's
 * templates linear in its length.
 */
export interface ParentResultsTemplate {
  /** The template whose entries come first, or -1. */
  extends: number;
  /** This template's own entries (`"key":value`, comma-separated). */
  pieces: ResultPiece[];
}

export const NO_NODE = -1;
