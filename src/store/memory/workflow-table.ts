import type { JsonValue } from '../../domain/json';
import type { StoredResult } from '../../domain/parent-results';
import type { WorkflowPlan } from '../../domain/workflow-plan';
import type { WorkflowRun } from '../../domain/workflow-run';
import type { WorkflowState } from '../../domain/workflow-state-machine';
import { MinHeap } from './min-heap';

/** A workflow as the memory store keeps it. */
export interface WorkflowSlot {
  plan: WorkflowPlan;
  run: WorkflowRun;
  /** The id of each job node's job. */
  jobIds: string[];
  /** The results of the job nodes that succeeded (and their JSON texts), kept whatever the jobs' retention. */
  results: Map<number, StoredResult & { value: JsonValue }>;
  /** The workflow's trace context, for its facts. */
  traceparent?: string;
  /** Set while an advance is applied: the changes it makes to the workflow's own jobs advance nothing more. */
  isApplying: boolean;
}

export type WorkflowEnd = Exclude<WorkflowState, 'pending' | 'running'>;

/** Workflows by id, and the ended ones by end state and time, for retention. */
export class WorkflowTable {
  private readonly slots = new Map<string, WorkflowSlot>();
  /** Ended workflows by completedAt, per end state (each has its retention). */
  readonly ended: Readonly<Record<WorkflowEnd, MinHeap<{ at: number; id: string }>>> = {
    completed: new MinHeap(),
    failed: new MinHeap(),
    cancelled: new MinHeap(),
  };

  get size(): number {
    return this.slots.size;
  }

  get(id: string): WorkflowSlot | undefined {
    return this.slots.get(id);
  }

  has(id: string): boolean {
    return this.slots.has(id);
  }

  add(slot: WorkflowSlot): void {
    this.slots.set(slot.plan.id, slot);
  }

  delete(id: string): void {
    this.slots.delete(id);
  }

  values(): IterableIterator<WorkflowSlot> {
    return this.slots.values();
  }
}
