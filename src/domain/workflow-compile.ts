import type { FieldViolation } from './errors';
import { hasControlCharacters } from './identifiers';
import type { JobSubmission } from './job-submission';
import {
  CALLBACK_KINDS,
  MAX_WORKFLOW_DEPTH,
  WORKFLOW_NAME_MAX_CHARS,
  type BatchDefinition,
  type CallbackKind,
  type ChainDefinition,
  type GroupDefinition,
  type WorkflowDefinition,
  type WorkflowElement,
} from './workflow-definition';
import {
  NO_NODE,
  type FiringRule,
  type NodeRole,
  type ParentResultsTemplate,
  type PlanNode,
  type ResultPiece,
  type WorkflowPlan,
} from './workflow-plan';

/**
 * How the primitives map onto plan nodes (ojs-workflows sections 4 to 7, 10):
 *
 * - Every element has an entry (what its first jobs wait for, and the
 *   parent_results they get) and exits (the nodes whatever follows it waits
 *   for). A job is its own entry and exit.
 * - Chain: step k's entry is step k-1's exits, with `all_succeeded`, so a
 *   failed step cancels the rest; its exits are the last step's.
 * - Group: every job shares the group's entry; its exits are all of theirs.
 * - Batch: the jobs as in a group; each callback waits for every job's exits
 *   and fires by its rule; its exits are its callbacks, so whatever follows
 *   a batch waits for its triggered callbacks (section 10.1).
 * - A group or batch whose entry is several nodes gets a join, the one node
 *   its jobs wait for.
 *
 * parent_results (section 7): step k > 0 of a chain gets every earlier step
 * of that chain keyed "0".."k-1"; step 0, and every job of a group or batch,
 * gets what the element itself gets (the group of section 10.3 gets the
 * extract step's result); a callback gets its batch's jobs keyed by index.
 * An element's result is its job's result, or for a nested workflow an
 * object keyed by element index (section 7.3); a batch's object also holds
 * its callbacks' results under "on_complete", "on_success", "on_failure"
 * (null when not triggered), since what follows a batch usually wants what
 * its callbacks aggregated. A nested chain's steps after the first see their
 * own chain's steps only: keys are indexes, and outer ones would collide.
 */

/** A plan, and the jobs its job nodes stand for. */
export interface CompiledWorkflow {
  plan: WorkflowPlan;
  /** The job of node i, for each job node. */
  submissions: JobSubmission[];
}

/**
 * Compiles a definition into its plan, adding every structural problem to
 * `violations` with the path of the field at fault. The plan is meaningful
 * only when no violation was added. Expects the definition to hold at most
 * MAX_WORKFLOW_JOBS jobs (see {@link countWorkflowJobs}).
 */
export function compileWorkflow(definition: WorkflowDefinition, id: string, violations: FieldViolation[]): CompiledWorkflow {
  const planner = new Planner(violations);
  const root = planner.element(definition, { path: '', key: '', depth: 1, role: 'step' }, { dependencies: [], parentResults: NO_NODE });
  return { plan: planner.plan(id, definition, root.exits), submissions: planner.submissions };
}

/**
 * The jobs of a definition, callbacks included, counting no further than
 * one level past MAX_WORKFLOW_DEPTH (what lies deeper is refused anyway): a
 * bound checked before compiling anything.
 */
export function countWorkflowJobs(element: WorkflowElement, depth = 1): number {
  if (element.kind === 'job') return 1;
  if (depth > MAX_WORKFLOW_DEPTH) return 0;
  const children = element.kind === 'chain' ? element.steps : element.jobs;
  const callbacks = element.kind === 'batch' ? CALLBACK_KINDS.filter(({ field }) => element.callbacks[field] !== undefined).length : 0;
  return children.reduce((sum, child) => sum + countWorkflowJobs(child, depth + 1), callbacks);
}

/** Where an element sits. The root has the empty path and key. */
interface Place {
  path: string;
  key: string;
  depth: number;
  role: 'step' | 'job';
}

/** What an element's first jobs wait for and receive. */
interface Entry {
  dependencies: number[];
  parentResults: number;
}

/** A result as parent_results embeds it: a node's result, or an object of entries. */
type ResultShape = number | ResultEntry[];
type ResultEntry = [key: string, value: ResultShape];

interface Compiled {
  exits: number[];
  shape: ResultShape;
}

type Firing = Pick<PlanNode, 'rule' | 'unfired' | 'gate'>;

/** Chain steps, group and batch jobs (which run when their element does) and joins: run when everything before succeeded. */
const CHAIN_STEP_FIRING: Firing = { rule: 'all_succeeded', unfired: 'cancelled', gate: NO_NODE };

const CALLBACK_RULES: Readonly<Record<CallbackKind, FiringRule>> = {
  on_complete: 'all_settled',
  on_success: 'all_succeeded',
  on_failure: 'any_failed',
};

class Planner {
  readonly submissions: JobSubmission[] = [];
  private readonly jobNodes: PlanNode[] = [];
  /** Joins are numbered -2, -3... while compiling (-1 is NO_NODE), and placed after the jobs at the end. */
  private readonly joins: PlanNode[] = [];
  private readonly templates: ParentResultsTemplate[] = [];

  constructor(private readonly violations: FieldViolation[]) {}

  element(element: WorkflowElement, at: Place, entry: Entry): Compiled {
    if (element.kind === 'job') {
      const node = this.addJob(element.job, at, at.role, entry, CHAIN_STEP_FIRING);
      return { exits: [node], shape: node };
    }
    if (at.depth > MAX_WORKFLOW_DEPTH) {
      this.violation(at.path, `nests workflows deeper than ${MAX_WORKFLOW_DEPTH} levels`);
      return { exits: [], shape: [] };
    }
    this.checkName(element, at);
    switch (element.kind) {
      case 'chain':
        return this.chain(element, at, entry);
      case 'group':
        return this.group(element, at, entry);
      case 'batch':
        return this.batch(element, at, entry);
    }
  }

  plan(id: string, definition: WorkflowDefinition, exits: number[]): WorkflowPlan {
    const jobCount = this.jobNodes.length;
    const renumber = (node: number): number => (node < NO_NODE ? jobCount - node - 2 : node);
    const nodes = [...this.jobNodes, ...this.joins].map((node) => ({
      ...node,
      dependencies: node.dependencies.map(renumber),
      dependents: [] as number[],
      gate: renumber(node.gate),
    }));
    nodes.forEach((node, index) => {
      for (const dependency of node.dependencies) nodes[dependency]?.dependents.push(index);
    });
    return {
      id,
      type: definition.kind,
      name: definition.name ?? '',
      nodes,
      jobCount,
      templates: this.templates,
      exits: exits.map(renumber),
    };
  }

  private chain(chain: ChainDefinition, at: Place, entry: Entry): Compiled {
    if (chain.steps.length === 0) this.violation(fieldOf(at, 'steps'), 'must contain at least one step');
    const entries: ResultEntry[] = [];
    let next = entry;
    let exits: number[] = [];
    chain.steps.forEach((step, i) => {
      const compiled = this.element(step, childPlace(at, 'steps', i, 'step'), next);
      const stepEntry: ResultEntry = [String(i), compiled.shape];
      entries.push(stepEntry);
      exits = compiled.exits;
      // The next step waits for this one and sees the results of every step so far.
      const previous = i === 0 ? NO_NODE : next.parentResults;
      if (i + 1 < chain.steps.length) next = { dependencies: exits, parentResults: this.addTemplate(previous, [stepEntry]) };
    });
    return { exits, shape: entries };
  }

  private group(group: GroupDefinition, at: Place, entry: Entry): Compiled {
    if (group.jobs.length === 0) this.violation(fieldOf(at, 'jobs'), 'must contain at least one job');
    const { exits, entries } = this.parallel(group.jobs, at, this.joined(entry, at));
    return { exits, shape: entries };
  }

  private batch(batch: BatchDefinition, at: Place, entry: Entry): Compiled {
    if (batch.jobs.length === 0) this.violation(fieldOf(at, 'jobs'), 'must contain at least one job');
    const started = this.joined(entry, at);
    const jobs = this.parallel(batch.jobs, at, started);
    const callbackEntry: Entry = { dependencies: jobs.exits, parentResults: this.addTemplate(NO_NODE, jobs.entries) };
    const gate = started.dependencies[0] ?? NO_NODE;
    const exits: number[] = [];
    const entries = [...jobs.entries];
    for (const { kind, field: name } of CALLBACK_KINDS) {
      const submission = batch.callbacks[name];
      if (submission === undefined) continue;
      const place: Place = {
        path: fieldOf(at, `callbacks.${kind}`),
        key: at.key === '' ? kind : `${at.key}.${kind}`,
        depth: at.depth,
        role: 'job',
      };
      const node = this.addJob(submission, place, kind, callbackEntry, { rule: CALLBACK_RULES[kind], unfired: 'skipped', gate });
      exits.push(node);
      entries.push([kind, node]);
    }
    if (exits.length === 0) this.violation(fieldOf(at, 'callbacks'), 'must define at least one of on_complete, on_success, on_failure');
    return { exits, shape: entries };
  }

  /** The jobs of a group or batch: each starts from the same entry. */
  private parallel(jobs: WorkflowElement[], at: Place, entry: Entry): { exits: number[]; entries: ResultEntry[] } {
    const exits: number[] = [];
    const entries = jobs.map((job, i): ResultEntry => {
      const compiled = this.element(job, childPlace(at, 'jobs', i, 'job'), entry);
      exits.push(...compiled.exits);
      return [String(i), compiled.shape];
    });
    return { exits, entries };
  }

  /** The entry as one node: a join when it is several, so n jobs after m exits take n + m edges, not n * m. */
  private joined(entry: Entry, at: Place): Entry {
    if (entry.dependencies.length <= 1) return entry;
    this.joins.push(planNode(at.path, at.key, 'join', '', entry.dependencies, CHAIN_STEP_FIRING, NO_NODE));
    return { dependencies: [NO_NODE - this.joins.length], parentResults: entry.parentResults };
  }

  private addJob(submission: JobSubmission, at: Place, role: NodeRole, entry: Entry, firing: Firing): number {
    this.submissions.push(submission);
    return this.jobNodes.push(planNode(at.path, at.key, role, submission.type, entry.dependencies, firing, entry.parentResults)) - 1;
  }

  private addTemplate(base: number, entries: ResultEntry[]): number {
    const pieces: ResultPiece[] = [];
    appendEntries(entries, pieces);
    return this.templates.push({ extends: base, pieces }) - 1;
  }

  private checkName(definition: WorkflowDefinition, at: Place): void {
    const name = definition.name;
    if (name === undefined) return;
    if (name.length > WORKFLOW_NAME_MAX_CHARS) this.violation(fieldOf(at, 'name'), `must be at most ${WORKFLOW_NAME_MAX_CHARS} characters`);
    else if (hasControlCharacters(name)) this.violation(fieldOf(at, 'name'), 'must not contain control characters');
  }

  private violation(name: string, description: string): void {
    this.violations.push({ field: name, description });
  }
}

function planNode(
  path: string,
  key: string,
  role: NodeRole,
  type: string,
  dependencies: number[],
  firing: Firing,
  parentResults: number,
): PlanNode {
  return { path, key, role, type, dependencies, dependents: [], ...firing, parentResults };
}

/** The field `name` of the element at `at`. */
function fieldOf(at: Place, name: string): string {
  return at.path === '' ? name : `${at.path}.${name}`;
}

function childPlace(at: Place, list: 'steps' | 'jobs', index: number, role: Place['role']): Place {
  return {
    path: fieldOf(at, `${list}[${index}]`),
    key: at.key === '' ? String(index) : `${at.key}.${index}`,
    depth: at.depth + 1,
    role,
  };
}

/** Appends `"key":value,...` to `pieces`, merging adjacent literal text. */
function appendEntries(entries: ResultEntry[], pieces: ResultPiece[]): void {
  const literal = (text: string): void => {
    const last = pieces.length - 1;
    const previous = pieces[last];
    if (typeof previous === 'string') pieces[last] = previous + text;
    else pieces.push(text);
  };
  entries.forEach(([key, value], i) => {
    literal(`${i > 0 ? ',' : ''}${JSON.stringify(key)}:`);
    if (typeof value === 'number') {
      pieces.push(value);
    } else {
      literal('{');
      appendEntries(value, pieces);
      literal('}');
    }
  });
}
