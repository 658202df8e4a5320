import { OjsError } from '../../domain/errors';
import {
  cursorAt,
  type ErrorSummary,
  type EventFact,
  type ProgressFact,
  type QueueFact,
  type RateLimitFact,
  type RecordedFact,
  type ScheduleFact,
  type WorkerFact,
  type WorkflowFact,
} from '../../domain/event-facts';
import { JOB_STATES, type HandlerCode } from '../../domain/job';
import type { JsonValue } from '../../domain/json';
import type { JobTransition } from '../../domain/transition';
import { NEXT_WORKER_STATES } from '../../domain/worker';
import type { WorkflowType } from '../../domain/workflow-definition';
import type { WorkflowChange } from '../../domain/workflow-facts';
import {
  readArray,
  readInteger,
  readJson,
  readJsonArray,
  readJsonObject,
  readKeyOf,
  readNumber,
  readOneOf,
  readString,
  unexpectedReply,
} from './reply';

/**
 * Facts as lib/ojs.lua records them: one line of text per fact, its fields
 * in a fixed order per kind, separated by FIELD_SEPARATOR (US, 0x1f), empty
 * where a fact has no value. The same text is the transition a script
 * returns, so what the log tells and what the caller is told never differ.
 *
 * - job (`j`): at, id, type, queue, from, to, attempt, worker, priority,
 *   scheduled at, next retry at, most attempts, started at, enqueued at,
 *   created at, error summary JSON, dead letter (0/1), reason, actor,
 *   traceparent;
 * - progress (`p`): at, id, type, queue, worker, attempt, progress, traceparent;
 * - worker (`w`): at, worker, from, to, queues JSON, concurrency, active
 *   jobs, reason, registered at, last beat at;
 * - queue (`q`): at, queue, paused (0/1), actor;
 * - schedule (`s`): at, name, expression, timezone (both stored through
 *   factText), tick, job id, job type, queue, run count, skip reason,
 *   missed count, last missed, count at least (0/1);
 * - rate limit (`r`): at, queue, change (exceeded, released), strategy,
 *   limit, current, job id;
 * - workflow (`f`): at, workflow id, type, name (factText), change, job
 *   count, step, step type, job id, steps remaining, duration, failed step,
 *   failed step type, failed job id, traceparent (factText).
 *
 * The event log is a stream with one entry per script call that recorded
 * facts: its id is "<position of its first fact>-<number of facts>", its
 * one field `f` holds the facts' lines separated by FACT_SEPARATOR (RS,
 * 0x1e). One XADD per call, and a field layout that never varies (the
 * stream stores the field name once per node), keep the log cheap; a fact's
 * cursor is its position (domain event-facts.ts), so readers resume in the
 * middle of an entry.
 *
 * Free text a client chose (a reason, an actor, a traceparent) is stored
 * through {@link factText}, so that no value holds a separator; the other
 * values are ids, names and numbers the domain checked, or JSON, which
 * escapes control characters.
 */

/** The separator of the fields of a line a script builds (lib/ojs.lua FIELD_SEPARATOR): facts, claimed jobs. */
export const FIELD_SEPARATOR = '\x1f';
const FACT_SEPARATOR = '\x1e';

const HANDLER_CODES: Readonly<Record<HandlerCode, true>> = { retry: true, discard: true, dead_letter: true, fail: true };
const WORKER_FROM = { ...NEXT_WORKER_STATES, none: true } as const;
const WORKER_TO = { ...NEXT_WORKER_STATES, removed: true } as const;
const REMOVAL_REASONS = { deregistered: true, dead: true } as const;

/** Free text as facts hold it: the separators, and the escape character itself, written as %XX. */
export function factText(text: string): string {
  // oxlint-disable-next-line eslint/no-control-regex -- the separators are control characters on purpose: free text rarely holds them
  return text.replace(/[%\x1e\x1f]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase().padStart(2, '0')}`);
}

function fromFactText(text: string): string {
  return text.replace(/%(25|1E|1F)/g, (_, hex: string) => String.fromCharCode(parseInt(hex, 16)));
}

/** Per list of field names, each name's position in a line (field 0 is the kind): found once, not on every read. */
const POSITIONS = new WeakMap<readonly string[], ReadonlyMap<string, number>>();

function positionsOf(names: readonly string[]): ReadonlyMap<string, number> {
  let positions = POSITIONS.get(names);
  if (positions === undefined) {
    positions = new Map(names.map((name, i) => [name, i + 1]));
    POSITIONS.set(names, positions);
  }
  return positions;
}

/** The fields of one fact line, read by position, with readers that name the fact in their errors. */
class FactFields {
  private readonly values: string[];
  private readonly positions: ReadonlyMap<string, number>;

  constructor(
    line: string,
    private readonly what: string,
    names: readonly string[],
  ) {
    this.values = line.split(FIELD_SEPARATOR);
    if (this.values.length !== names.length + 1) unexpectedReply(`${what} (${names.length} fields)`, line);
    this.positions = positionsOf(names);
  }

  private value(name: string): string {
    return this.values[this.positions.get(name)!]!;
  }

  text(name: string): string {
    const value = this.value(name);
    if (value === '') unexpectedReply(`${this.what} ${name}`, value);
    return value;
  }

  optionalText(name: string): string | undefined {
    const value = this.value(name);
    return value === '' ? undefined : value;
  }

  /** Free text stored through factText. */
  optionalFreeText(name: string): string | undefined {
    const value = this.optionalText(name);
    return value === undefined ? undefined : fromFactText(value);
  }

  int(name: string): number {
    return readInteger(this.text(name), `${this.what} ${name}`);
  }

  optionalInt(name: string): number | undefined {
    return this.value(name) === '' ? undefined : this.int(name);
  }

  json(name: string): JsonValue | undefined {
    const value = this.optionalText(name);
    return value === undefined ? undefined : readJson(value, `${this.what} ${name}`);
  }
}

const JOB_FIELDS = [
  'at',
  'id',
  'type',
  'queue',
  'from',
  'to',
  'attempt',
  'worker',
  'priority',
  'scheduledAt',
  'nextRetryAt',
  'maxAttempts',
  'startedAt',
  'enqueuedAt',
  'createdAt',
  'error',
  'deadLetter',
  'reason',
  'actor',
  'traceparent',
] as const;
const PROGRESS_FIELDS = ['at', 'id', 'type', 'queue', 'worker', 'attempt', 'progress', 'traceparent'] as const;
const WORKER_FIELDS = [
  'at',
  'worker',
  'from',
  'to',
  'queues',
  'concurrency',
  'activeJobs',
  'reason',
  'registeredAt',
  'lastBeatAt',
] as const;
const QUEUE_FIELDS = ['at', 'queue', 'paused', 'actor'] as const;
const SCHEDULE_FIELDS = [
  'at',
  'name',
  'expression',
  'timezone',
  'tick',
  'job',
  'type',
  'queue',
  'runCount',
  'reason',
  'missedCount',
  'lastMissed',
  'countAtLeast',
] as const;
const SKIP_REASONS = { overlap_skip: true, missed: true, invalid_template: true } as const;
const RATE_LIMIT_FIELDS = ['at', 'queue', 'change', 'strategy', 'limit', 'current', 'job'] as const;
const RATE_LIMIT_CHANGES = { exceeded: true, released: true } as const;
const RATE_LIMIT_STRATEGIES = { rate: true, concurrency: true } as const;
const WORKFLOW_FIELDS = [
  'at',
  'id',
  'type',
  'name',
  'change',
  'jobCount',
  'step',
  'stepType',
  'job',
  'stepsRemaining',
  'durationMs',
  'failedStep',
  'failedStepType',
  'failedJob',
  'traceparent',
] as const;
const WORKFLOW_TYPES: Readonly<Record<WorkflowType, true>> = { chain: true, group: true, batch: true };
const WORKFLOW_CHANGES: Readonly<Record<WorkflowChange, true>> = {
  created: true,
  started: true,
  step_completed: true,
  step_failed: true,
  completed: true,
  failed: true,
  cancelled: true,
};

/** Sets `record[key]` to `value` unless it is undefined (the fact types have optional, not undefined, fields). */
function assign<T extends object, K extends keyof T>(record: T, key: K, value: T[K] | undefined): void {
  if (value !== undefined) record[key] = value;
}

function readErrorSummary(fields: FactFields): ErrorSummary | undefined {
  const value = fields.json('error');
  if (value === undefined) return undefined;
  const object = readJsonObject(value, 'fact error');
  const summary: ErrorSummary = {
    type: readString(object['type'], 'fact error type'),
    message: readString(object['message'], 'fact error message'),
  };
  if (object['code'] !== undefined) summary.code = readKeyOf(object['code'], HANDLER_CODES, 'fact error code');
  if (object['details'] !== undefined) summary.details = readJsonObject(object['details'], 'fact error details');
  return summary;
}

/** A job fact's fields: the transition it records. */
function readJobFields(line: string): JobTransition {
  const fields = new FactFields(line, 'job fact', JOB_FIELDS);
  const fact: JobTransition = {
    at: fields.int('at'),
    jobId: fields.text('id'),
    jobType: fields.text('type'),
    queue: fields.text('queue'),
    from: readOneOf(fields.text('from'), ['none', ...JOB_STATES], 'fact from'),
    to: readOneOf(fields.text('to'), JOB_STATES, 'fact to'),
    attempt: fields.int('attempt'),
  };
  assign(fact, 'workerId', fields.optionalText('worker'));
  assign(fact, 'priority', fields.optionalInt('priority'));
  assign(fact, 'scheduledAt', fields.optionalInt('scheduledAt'));
  assign(fact, 'nextRetryAt', fields.optionalInt('nextRetryAt'));
  assign(fact, 'maxAttempts', fields.optionalInt('maxAttempts'));
  assign(fact, 'startedAt', fields.optionalInt('startedAt'));
  assign(fact, 'enqueuedAt', fields.optionalInt('enqueuedAt'));
  assign(fact, 'createdAt', fields.optionalInt('createdAt'));
  assign(fact, 'error', readErrorSummary(fields));
  const deadLetter = fields.optionalText('deadLetter');
  if (deadLetter !== undefined) fact.deadLetter = deadLetter === '1';
  assign(fact, 'reason', fields.optionalFreeText('reason'));
  assign(fact, 'actor', fields.optionalFreeText('actor'));
  assign(fact, 'traceparent', fields.optionalFreeText('traceparent'));
  return fact;
}

/**
 * The line of a job fact, as lib/ojs.lua transition() builds it: scripts
 * record lines built here where the server knows every field beforehand
 * (a new job's), which spares Redis the concatenation. The inverse of
 * readJobFields; test/contract/lua-domain.test.ts proves both builders agree.
 */
export function encodeJobFact(t: JobTransition): string {
  const error = t.error === undefined ? '' : JSON.stringify(t.error);
  const deadLetter = t.deadLetter === undefined ? '' : t.deadLetter ? '1' : '0';
  return [
    'j',
    t.at,
    t.jobId,
    t.jobType,
    t.queue,
    t.from,
    t.to,
    t.attempt,
    optional(t.workerId),
    optional(t.priority),
    optional(t.scheduledAt),
    optional(t.nextRetryAt),
    optional(t.maxAttempts),
    optional(t.startedAt),
    optional(t.enqueuedAt),
    optional(t.createdAt),
    error,
    deadLetter,
    free(t.reason),
    free(t.actor),
    free(t.traceparent),
  ].join(FIELD_SEPARATOR);
}

function optional(value: string | number | undefined): string {
  return value === undefined ? '' : String(value);
}

/** Free text as facts hold it, or '' for none. */
function free(value: string | undefined): string {
  return value === undefined ? '' : factText(value);
}

function readProgressFact(line: string): ProgressFact {
  const fields = new FactFields(line, 'progress fact', PROGRESS_FIELDS);
  const fact: ProgressFact = {
    kind: 'progress',
    at: fields.int('at'),
    jobId: fields.text('id'),
    jobType: fields.text('type'),
    queue: fields.text('queue'),
    workerId: fields.text('worker'),
    attempt: fields.int('attempt'),
  };
  const progress = fields.optionalText('progress');
  if (progress !== undefined) fact.progress = readNumber(Number(progress), 'fact progress');
  assign(fact, 'traceparent', fields.optionalFreeText('traceparent'));
  return fact;
}

function readWorkerFact(line: string): WorkerFact {
  const fields = new FactFields(line, 'worker fact', WORKER_FIELDS);
  const fact: WorkerFact = {
    kind: 'worker',
    at: fields.int('at'),
    workerId: fields.text('worker'),
    from: readKeyOf(fields.text('from'), WORKER_FROM, 'fact from'),
    to: readKeyOf(fields.text('to'), WORKER_TO, 'fact to'),
  };
  const reason = fields.optionalText('reason');
  if (reason !== undefined) fact.reason = readKeyOf(reason, REMOVAL_REASONS, 'fact reason');
  const queues = fields.json('queues');
  if (queues !== undefined) fact.queues = readJsonArray(queues, 'fact queues').map((queue, i) => readString(queue, `fact queues[${i}]`));
  assign(fact, 'concurrency', fields.optionalInt('concurrency'));
  assign(fact, 'activeJobs', fields.optionalInt('activeJobs'));
  assign(fact, 'registeredAt', fields.optionalInt('registeredAt'));
  assign(fact, 'lastBeatAt', fields.optionalInt('lastBeatAt'));
  return fact;
}

function readQueueFact(line: string): QueueFact {
  const fields = new FactFields(line, 'queue fact', QUEUE_FIELDS);
  const fact: QueueFact = { kind: 'queue', at: fields.int('at'), queue: fields.text('queue'), paused: fields.text('paused') === '1' };
  assign(fact, 'actor', fields.optionalFreeText('actor'));
  return fact;
}

function readScheduleFact(line: string): ScheduleFact {
  const fields = new FactFields(line, 'schedule fact', SCHEDULE_FIELDS);
  const fact: ScheduleFact = {
    kind: 'schedule',
    at: fields.int('at'),
    name: fields.text('name'),
    expression: fromFactText(fields.text('expression')),
    timezone: fromFactText(fields.text('timezone')),
    tick: fields.int('tick'),
  };
  assign(fact, 'jobId', fields.optionalText('job'));
  assign(fact, 'jobType', fields.optionalText('type'));
  assign(fact, 'queue', fields.optionalText('queue'));
  assign(fact, 'runCount', fields.optionalInt('runCount'));
  const reason = fields.optionalText('reason');
  if (reason !== undefined) fact.reason = readKeyOf(reason, SKIP_REASONS, 'fact reason');
  assign(fact, 'missedCount', fields.optionalInt('missedCount'));
  assign(fact, 'lastMissed', fields.optionalInt('lastMissed'));
  const atLeast = fields.optionalText('countAtLeast');
  if (atLeast !== undefined) fact.isCountAtLeast = atLeast === '1';
  return fact;
}

function readRateLimitFact(line: string): RateLimitFact {
  const fields = new FactFields(line, 'rate limit fact', RATE_LIMIT_FIELDS);
  const fact: RateLimitFact = {
    kind: 'rate_limit',
    at: fields.int('at'),
    queue: fields.text('queue'),
    change: readKeyOf(fields.text('change'), RATE_LIMIT_CHANGES, 'fact change'),
    strategy: readKeyOf(fields.text('strategy'), RATE_LIMIT_STRATEGIES, 'fact strategy'),
  };
  assign(fact, 'limit', fields.optionalInt('limit'));
  assign(fact, 'current', fields.optionalInt('current'));
  assign(fact, 'jobId', fields.optionalText('job'));
  return fact;
}

function readWorkflowFact(line: string): WorkflowFact {
  const fields = new FactFields(line, 'workflow fact', WORKFLOW_FIELDS);
  const fact: WorkflowFact = {
    kind: 'workflow',
    at: fields.int('at'),
    workflowId: fields.text('id'),
    workflowType: readKeyOf(fields.text('type'), WORKFLOW_TYPES, 'fact workflow type'),
    name: fields.optionalFreeText('name') ?? '',
    change: readKeyOf(fields.text('change'), WORKFLOW_CHANGES, 'fact workflow change'),
    jobCount: fields.int('jobCount'),
  };
  assign(fact, 'step', fields.optionalText('step'));
  assign(fact, 'stepType', fields.optionalText('stepType'));
  assign(fact, 'jobId', fields.optionalText('job'));
  assign(fact, 'stepsRemaining', fields.optionalInt('stepsRemaining'));
  assign(fact, 'durationMs', fields.optionalInt('durationMs'));
  assign(fact, 'failedStep', fields.optionalText('failedStep'));
  assign(fact, 'failedStepType', fields.optionalText('failedStepType'));
  assign(fact, 'failedJobId', fields.optionalText('failedJob'));
  assign(fact, 'traceparent', fields.optionalFreeText('traceparent'));
  return fact;
}

/** A fact from its line. */
export function decodeFact(line: string): EventFact {
  switch (line.slice(0, 2)) {
    case `j${FIELD_SEPARATOR}`:
      return { kind: 'job', ...readJobFields(line) };
    case `p${FIELD_SEPARATOR}`:
      return readProgressFact(line);
    case `w${FIELD_SEPARATOR}`:
      return readWorkerFact(line);
    case `q${FIELD_SEPARATOR}`:
      return readQueueFact(line);
    case `s${FIELD_SEPARATOR}`:
      return readScheduleFact(line);
    case `r${FIELD_SEPARATOR}`:
      return readRateLimitFact(line);
    case `f${FIELD_SEPARATOR}`:
      return readWorkflowFact(line);
    default:
      return unexpectedReply('fact kind', line);
  }
}

/** A transition a script returned (lib/ojs.lua transition(): a job fact's line). */
export function decodeTransition(value: unknown): JobTransition {
  const line = readString(value, 'transition');
  if (!line.startsWith(`j${FIELD_SEPARATOR}`)) return unexpectedReply('transition', value);
  return readJobFields(line);
}

export function decodeTransitions(value: unknown): JobTransition[] {
  return readArray(value, 'transitions').map(decodeTransition);
}

/** The facts of some stream entries, and the id of the last entry (of facts or not). */
export interface FactEntries {
  facts: RecordedFact[];
  /** Absent when there were no entries. */
  lastId?: string;
}

const ENTRY_ID_PATTERN = /^(\d{1,16})-(\d{1,10})$/;

/**
 * The facts of stream entries as XRANGE and XREAD return them
 * ({id, {field, value...}}...), each with its cursor. An entry this server
 * did not write (of another version, or written by hand: its id or its
 * fields are not those of a batch of facts) is left out: it holds no fact.
 * Its id still counts as read (`lastId`), so that no reader stalls on it.
 */
export function decodeFactEntries(value: unknown): FactEntries {
  const decoded: FactEntries = { facts: [] };
  for (const entry of readArray(value, 'fact entries')) {
    const [idValue, fields] = readArray(entry, 'fact entry');
    const id = readString(idValue, 'fact entry id');
    decoded.lastId = id;
    try {
      decoded.facts.push(...entryFacts(id, fields));
    } catch (error) {
      if (!(error instanceof OjsError)) throw error;
    }
  }
  return decoded;
}

/** The facts of one entry of the log, all or none. */
function entryFacts(id: string, fields: unknown): RecordedFact[] {
  const match = ENTRY_ID_PATTERN.exec(id);
  const [name, batch] = readArray(fields, 'fact entry fields');
  if (match === null || name !== 'f') return unexpectedReply('fact entry', id);
  const lines = readString(batch, 'fact entry facts').split(FACT_SEPARATOR);
  const first = Number(match[1]);
  if (lines.length !== Number(match[2])) return unexpectedReply('fact entry (one fact per position)', id);
  return lines.map((line, i) => ({ cursor: cursorAt(first + i), fact: decodeFact(line) }));
}
