import { OjsError } from '../../domain/errors';
import type { WorkflowType } from '../../domain/workflow-definition';
import type {
  FiringRule,
  NodeRole,
  ParentResultsTemplate,
  PlanNode,
  ResultPiece,
  UnfiredOutcome,
  WorkflowPlan,
} from '../../domain/workflow-plan';
import type { NodeProgress, NodeStatus, WorkflowProgress, WorkflowRun } from '../../domain/workflow-run';
import { WORKFLOW_STATES } from '../../domain/workflow-state-machine';
import { readInteger, readJson, readJsonObject, readKeyOf, readOneOf, readOptionalNumberText, readString, unexpectedReply } from './reply';

/**
 * A workflow as two Redis hashes (keys.ts workflowPlan and workflow), laid
 * out so that lua/lib/workflows.lua advances it reading short delimited
 * records and never parsing JSON; its header lists the fields. The plan is
 * written once at creation; the run is what settlements change. Node i's
 * fields are suffixed with i: `n<i>` (the rule's record), `d<i>` (what only
 * GetWorkflow reads, as JSON), `j<i>` (its job's id), `s<i>` (its
 * progress); template i is `t<i>`.
 */

/** A workflow as stored: its plan, the id of each job node's job, and its run. */
export interface StoredWorkflow {
  plan: WorkflowPlan;
  /** The job of node i, for each job node. */
  jobIds: string[];
  run: WorkflowRun;
}

/** Separates a template's pieces (no JSON text holds it unescaped); a node's piece is "#<node>". */
const PIECE_SEPARATOR = '\x1f';
const NODE_PIECE = '#';
/** Separates the fields of a node's record; keys never hold it (they are indexes and callback kinds). */
const RECORD_SEPARATOR = '|';
const DISPLAY_KEY = /^[\w.]*$/;

const WORKFLOW_TYPES: Readonly<Record<WorkflowType, true>> = { chain: true, group: true, batch: true };
const ROLES: Readonly<Record<NodeRole, true>> = {
  step: true,
  job: true,
  on_complete: true,
  on_success: true,
  on_failure: true,
  join: true,
};
const RULES: Readonly<Record<FiringRule, true>> = { all_succeeded: true, all_settled: true, any_failed: true };
const UNFIRED: Readonly<Record<UnfiredOutcome, true>> = { cancelled: true, skipped: true };
const STATUSES: Readonly<Record<NodeStatus, true>> = {
  waiting: true,
  enqueued: true,
  succeeded: true,
  failed: true,
  cancelled: true,
  skipped: true,
};

/** The plan's hash as HSET takes it (field, value, field, value...), with the job id of each job node. */
export function encodeWorkflowPlan(plan: WorkflowPlan, jobIds: readonly string[]): string[] {
  if (jobIds.length !== plan.jobCount) refuse(`${jobIds.length} job ids for ${plan.jobCount} job nodes`);
  const fields = [
    'type',
    plan.type,
    'name',
    plan.name,
    'jobCount',
    String(plan.jobCount),
    'nodeCount',
    String(plan.nodes.length),
    'templateCount',
    String(plan.templates.length),
    'exits',
    plan.exits.join(','),
  ];
  plan.nodes.forEach((node, i) => {
    if (!DISPLAY_KEY.test(node.key)) refuse(`node key ${JSON.stringify(node.key)}`);
    const record = [node.rule, node.unfired, node.gate, node.parentResults, node.key, node.dependents.join(',')];
    const display = { path: node.path, role: node.role, type: node.type, dependencies: node.dependencies };
    fields.push(`n${i}`, record.join(RECORD_SEPARATOR), `d${i}`, JSON.stringify(display));
  });
  jobIds.forEach((id, i) => fields.push(`j${i}`, id));
  plan.templates.forEach((template, i) => fields.push(`t${i}`, encodeTemplate(template)));
  return fields;
}

/** The run's hash as HSET takes it: every field, as workflows.lua writes them. */
export function encodeWorkflowRun(run: WorkflowRun): string[] {
  const { progress } = run;
  const fields = [
    'state',
    progress.state,
    'createdAt',
    String(progress.createdAt),
    'completedCount',
    String(progress.completedCount),
    'failedCount',
    String(progress.failedCount),
    'settledCount',
    String(progress.settledCount),
  ];
  if (progress.startedAt !== undefined) fields.push('startedAt', String(progress.startedAt));
  if (progress.completedAt !== undefined) fields.push('completedAt', String(progress.completedAt));
  if (progress.firstFailed !== undefined) fields.push('firstFailed', String(progress.firstFailed));
  run.nodes.forEach((node, i) => fields.push(`s${i}`, `${node.status},${node.remaining},${node.failedDependencies}`));
  return fields;
}

/** A workflow from its two hashes (as HGETALL returns them); undefined when there is none. */
export function decodeWorkflow(id: string, planHash: Record<string, string>, runHash: Record<string, string>): StoredWorkflow | undefined {
  if (planHash['nodeCount'] === undefined && runHash['state'] === undefined) return undefined;
  const { plan, jobIds } = decodePlan(id, planHash);
  return { plan, jobIds, run: decodeRun(runHash, plan.nodes.length) };
}

function decodePlan(id: string, hash: Record<string, string>): { plan: WorkflowPlan; jobIds: string[] } {
  const jobCount = readInteger(hash['jobCount'], 'workflow jobCount');
  const nodeCount = readInteger(hash['nodeCount'], 'workflow nodeCount');
  const templateCount = readInteger(hash['templateCount'], 'workflow templateCount');
  const nodes = Array.from({ length: nodeCount }, (_, i) => decodeNode(hash, i));
  const jobIds = Array.from({ length: jobCount }, (_, i) => readString(hash[`j${i}`], `workflow job id ${i}`));
  const templates = Array.from({ length: templateCount }, (_, i) => decodeTemplate(readString(hash[`t${i}`], `workflow template ${i}`)));
  const plan: WorkflowPlan = {
    id,
    type: readKeyOf(hash['type'], WORKFLOW_TYPES, 'workflow type'),
    name: readString(hash['name'], 'workflow name'),
    nodes,
    jobCount,
    templates,
    exits: readIndexes(readString(hash['exits'], 'workflow exits'), 'workflow exits'),
  };
  return { plan, jobIds };
}

function decodeNode(hash: Record<string, string>, i: number): PlanNode {
  const record = readString(hash[`n${i}`], `workflow node ${i}`).split(RECORD_SEPARATOR);
  if (record.length !== 6) unexpectedReply(`workflow node ${i}`, hash[`n${i}`]);
  const [rule, unfired, gate, parentResults, key, dependents] = record;
  const what = `workflow node ${i} display`;
  const display = readJsonObject(readJson(readString(hash[`d${i}`], what), what), what);
  const dependencies = display['dependencies'];
  if (!Array.isArray(dependencies)) unexpectedReply(`workflow node ${i} dependencies`, dependencies);
  return {
    path: readString(display['path'], `workflow node ${i} path`),
    key: readString(key, `workflow node ${i} key`),
    role: readKeyOf(display['role'], ROLES, `workflow node ${i} role`),
    type: readString(display['type'], `workflow node ${i} type`),
    dependencies: dependencies.map((dependency) => readInteger(dependency, `workflow node ${i} dependency`)),
    dependents: readIndexes(dependents ?? '', `workflow node ${i} dependents`),
    rule: readKeyOf(rule, RULES, `workflow node ${i} rule`),
    unfired: readKeyOf(unfired, UNFIRED, `workflow node ${i} unfired outcome`),
    gate: readInteger(gate, `workflow node ${i} gate`),
    parentResults: readInteger(parentResults, `workflow node ${i} template`),
  };
}

function decodeRun(hash: Record<string, string>, nodeCount: number): WorkflowRun {
  const progress: WorkflowProgress = {
    state: readOneOf(hash['state'], WORKFLOW_STATES, 'workflow state'),
    createdAt: readInteger(hash['createdAt'], 'workflow createdAt'),
    completedCount: readInteger(hash['completedCount'], 'workflow completedCount'),
    failedCount: readInteger(hash['failedCount'], 'workflow failedCount'),
    settledCount: readInteger(hash['settledCount'], 'workflow settledCount'),
  };
  const startedAt = readOptionalNumberText(hash['startedAt'], 'workflow startedAt');
  if (startedAt !== undefined) progress.startedAt = startedAt;
  const completedAt = readOptionalNumberText(hash['completedAt'], 'workflow completedAt');
  if (completedAt !== undefined) progress.completedAt = completedAt;
  const firstFailed = readOptionalNumberText(hash['firstFailed'], 'workflow firstFailed');
  if (firstFailed !== undefined) progress.firstFailed = firstFailed;
  const nodes = Array.from({ length: nodeCount }, (_, i): NodeProgress => {
    const [status, remaining, failed, ...rest] = readString(hash[`s${i}`], `workflow node ${i} progress`).split(',');
    if (rest.length > 0) unexpectedReply(`workflow node ${i} progress`, hash[`s${i}`]);
    return {
      status: readKeyOf(status, STATUSES, `workflow node ${i} status`),
      remaining: readInteger(remaining, `workflow node ${i} remaining`),
      failedDependencies: readInteger(failed, `workflow node ${i} failed dependencies`),
    };
  });
  return { progress, nodes };
}

function encodeTemplate({ extends: base, pieces }: ParentResultsTemplate): string {
  return pieces.reduce<string>((text, piece) => {
    if (typeof piece === 'number') return `${text}${PIECE_SEPARATOR}${NODE_PIECE}${piece}`;
    if (piece === '' || piece.startsWith(NODE_PIECE) || piece.includes(PIECE_SEPARATOR)) refuse(`template text ${JSON.stringify(piece)}`);
    return `${text}${PIECE_SEPARATOR}${piece}`;
  }, String(base));
}

function decodeTemplate(text: string): ParentResultsTemplate {
  const [base, ...pieces] = text.split(PIECE_SEPARATOR);
  return {
    extends: readInteger(base, 'workflow template base'),
    pieces: pieces.map((piece): ResultPiece =>
      piece.startsWith(NODE_PIECE) ? readInteger(piece.slice(1), 'workflow template node') : piece,
    ),
  };
}

/** "3,7" as [3, 7]; "" as []. */
function readIndexes(text: string, what: string): number[] {
  return text === '' ? [] : text.split(',').map((index) => readInteger(index, what));
}

function refuse(what: string): never {
  throw new OjsError('backend_error', `refusing to store a workflow with ${what}`);
}
