import { sha256Hex } from '../../../lib/sha256';
import type { JobCreation, JobSubmission } from '../../../src/domain/job-submission';
import { DEFAULT_PAYLOAD_LIMITS } from '../../../src/domain/limits';
import { assembleParentResults, type StoredResult } from '../../../src/domain/parent-results';
import { createWorkflow, type NewWorkflow } from '../../../src/domain/workflow-creation';
import type {
  BatchDefinition,
  ChainDefinition,
  GroupDefinition,
  JobElement,
  WorkflowDefinition,
  WorkflowElement,
} from '../../../src/domain/workflow-definition';
import type { WorkflowPlan } from '../../../src/domain/workflow-plan';
import {
  cancelWorkflow,
  settleNode,
  startWorkflow,
  type NodeStatus,
  type WorkflowAdvance,
  type WorkflowRun,
} from '../../../src/domain/workflow-run';
import type { WorkflowState } from '../../../src/domain/workflow-state-machine';

export const NOW = Date.parse('2026-03-01T00:00:00Z');

/** Job creation with ids counting up from 1 (lowercase UUIDv7s, as job ids must be). */
export function jobCreation(overrides: Partial<JobCreation> = {}): JobCreation {
  let next = 0;
  return {
    now: NOW,
    newId: () => uuid(++next),
    digest: sha256Hex,
    defaults: { timeoutMs: 1_800_000, visibilityTimeoutMs: 1_800_000, gracePeriodMs: 30_000, heartbeatTimeoutMs: 60_000 },
    limits: DEFAULT_PAYLOAD_LIMITS,
    pending: false,
    ...overrides,
  };
}

export function uuid(n: number): string {
  return `01961234-5678-7abc-8ef0-${n.toString(16).padStart(12, '0')}`;
}

export function job(type: string, extra: Partial<JobSubmission> = {}): JobElement {
  return { kind: 'job', job: { type, args: [], ...extra } };
}

export function chain(...steps: WorkflowElement[]): ChainDefinition {
  return { kind: 'chain', steps };
}

export function group(...jobs: WorkflowElement[]): GroupDefinition {
  return { kind: 'group', jobs };
}

/** A batch whose callbacks are jobs of the given types. */
export function batch(
  jobs: WorkflowElement[],
  callbacks: { onComplete?: string; onSuccess?: string; onFailure?: string },
): BatchDefinition {
  const submission = (type: string | undefined): JobSubmission | undefined => (type === undefined ? undefined : { type, args: [] });
  return {
    kind: 'batch',
    jobs,
    callbacks: {
      onComplete: submission(callbacks.onComplete),
      onSuccess: submission(callbacks.onSuccess),
      onFailure: submission(callbacks.onFailure),
    },
  };
}

/**
 * A workflow and its run, driven by node keys ("0", "1.2", "on_failure"):
 * starts, settles and cancels as a store would, keeping every advance and
 * the results of the jobs that succeeded.
 */
export class WorkflowDriver {
  readonly created: NewWorkflow;
  readonly plan: WorkflowPlan;
  run: WorkflowRun;
  readonly advances: WorkflowAdvance[] = [];
  readonly results = new Map<number, StoredResult>();

  constructor(definition: WorkflowDefinition) {
    this.created = createWorkflow(definition, jobCreation());
    this.plan = this.created.plan;
    this.run = this.created.run;
  }

  index(key: string): number {
    const index = this.plan.nodes.findIndex((node) => node.key === key && node.role !== 'join');
    if (index < 0) throw new Error(`no node ${key}; keys: ${this.plan.nodes.map((node) => node.key).join(', ')}`);
    return index;
  }

  start(key: string): WorkflowAdvance {
    this.index(key);
    return this.apply(startWorkflow(this.plan, this.run, NOW));
  }

  succeed(key: string, result: unknown = { from: key }): WorkflowAdvance {
    const index = this.index(key);
    const json = JSON.stringify(result);
    this.results.set(index, { json, bytes: json.length });
    return this.apply(settleNode(this.plan, this.run, index, 'succeeded', NOW));
  }

  fail(key: string): WorkflowAdvance {
    return this.apply(settleNode(this.plan, this.run, this.index(key), 'failed', NOW));
  }

  cancel(): WorkflowAdvance {
    return this.apply(cancelWorkflow(this.plan, this.run, NOW));
  }

  get state(): WorkflowState {
    return this.run.progress.state;
  }

  status(key: string): NodeStatus | undefined {
    return this.run.nodes[this.index(key)]?.status;
  }

  /** Keys of the job nodes in each status. */
  statuses(): Partial<Record<NodeStatus, string[]>> {
    const byStatus: Partial<Record<NodeStatus, string[]>> = {};
    this.plan.nodes.forEach((node, index) => {
      const status = this.run.nodes[index]?.status;
      if (node.role === 'join' || status === undefined) return;
      (byStatus[status] ??= []).push(node.key);
    });
    return byStatus;
  }

  keys(indexes: readonly number[]): string[] {
    return indexes.map((index) => this.plan.nodes[index]?.key ?? `?${index}`);
  }

  parentResults(key: string): unknown {
    return JSON.parse(assembleParentResults(this.plan, this.index(key), (node) => this.results.get(node)));
  }

  private apply(advance: WorkflowAdvance): WorkflowAdvance {
    this.run = advance.run;
    this.advances.push(advance);
    return advance;
  }
}
