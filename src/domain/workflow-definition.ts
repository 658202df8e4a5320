import type { JobSubmission } from './job-submission';

/**
 * A workflow as a producer submits it (ojs-workflows sections 3 to 6 and 10):
 * a chain, group or batch whose elements are jobs or, nested, further
 * chains, groups and batches. The transport decides which elements are
 * nested workflows; here each element says what it is with `kind`, so a job
 * whose type happens to be "group" is never mistaken for one.
 */
export type WorkflowDefinition = ChainDefinition | GroupDefinition | BatchDefinition;

/** What a chain step, or a group or batch job, may be. */
export type WorkflowElement = JobElement | WorkflowDefinition;

export type WorkflowType = WorkflowDefinition['kind'];

export interface JobElement {
  kind: 'job';
  job: JobSubmission;
}

/** Sequential: each step starts when the one before it succeeded (section 4). */
export interface ChainDefinition {
  kind: 'chain';
  name?: string;
  steps: WorkflowElement[];
}

/** Parallel: every job starts at once; the group fails if any fails (section 5). */
export interface GroupDefinition {
  kind: 'group';
  name?: string;
  jobs: WorkflowElement[];
}

/** Parallel with callbacks fired on the jobs' collective outcome (section 6). Callbacks are single jobs. */
export interface BatchDefinition {
  kind: 'batch';
  name?: string;
  jobs: WorkflowElement[];
  callbacks: BatchCallbacks;
}

export interface BatchCallbacks {
  onComplete?: JobSubmission;
  onSuccess?: JobSubmission;
  onFailure?: JobSubmission;
}

/** The callback kinds, in the order they are compiled, with the field that names each in a request. */
export const CALLBACK_KINDS = [
  { kind: 'on_complete', field: 'onComplete' },
  { kind: 'on_success', field: 'onSuccess' },
  { kind: 'on_failure', field: 'onFailure' },
] as const satisfies readonly { kind: string; field: keyof BatchCallbacks }[];

export type CallbackKind = (typeof CALLBACK_KINDS)[number]['kind'];

/**
 * Most jobs in one workflow, callbacks included. A workflow is created in
 * one store operation, like an Enqueue of at most MAX_ENQUEUE_BATCH jobs,
 * and its plan is read on every settlement: both stay bounded.
 */
export const MAX_WORKFLOW_JOBS = 1_000;

/**
 * Deepest nesting accepted, the outermost workflow counting as level 1
 * (section 10.2 asks for at least 3: a chain of groups of chains; deeper is
 * "practically rare and difficult to debug"). Each level below the first
 * nests a parent_results object one level deeper than the results it
 * carries, which are at most MAX_JSON_DEPTH deep.
 */
export const MAX_WORKFLOW_DEPTH = 5;

/** Longest workflow name (display text). */
export const WORKFLOW_NAME_MAX_CHARS = 255;
