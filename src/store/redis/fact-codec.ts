import { OjsError } from '../../domain/errors';
import type { ErrorSummary, EventFact, ProgressFact, QueueFact, RecordedFact, WorkerFact } from '../../domain/event-facts';
import { JOB_STATES, type HandlerCode } from '../../domain/job';
import type { JsonValue } from '../../domain/json';
import type { JobTransition } from '../../domain/transition';
import { NEXT_WORKER_STATES } from '../../domain/worker';
import {
  readArray,
  readFlatHash,
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
 * Facts as lib/ojs.lua records them: flat lists of field names and string
 * values, the entries of the event log stream, and also the transitions
 * scripts return (the same table: what the log tells and what the caller is
 * told never disagree). Field names are short (every fact stores them):
 *
 * - every fact: k (job, progress, worker, queue), at;
 * - job: id, type, q (queue), from, to, n (attempt), w (worker), pri
 *   (priority), sched (scheduled at), retry (next retry at), max (most
 *   attempts), start (started at), enq (enqueued at), created, err (error
 *   summary JSON), dl (dead letter, 0/1), why (reason), by (actor), tp
 *   (traceparent);
 * - progress: id, type, q, w, n, p (progress), tp;
 * - worker: w, from, to, qs (queues JSON), conc (concurrency), active
 *   (active jobs), why (reason), reg (registered at), beat (last beat at);
 * - queue: q, paused (0/1), by.
 */

const HANDLER_CODES: Readonly<Record<HandlerCode, true>> = { retry: true, discard: true, dead_letter: true, fail: true };
const WORKER_FROM = { ...NEXT_WORKER_STATES, none: true } as const;
const WORKER_TO = { ...NEXT_WORKER_STATES, removed: true } as const;
const REMOVAL_REASONS = { deregistered: true, dead: true } as const;

/** The fields of a fact, with readers that name the fact in their errors. */
class FactFields {
  constructor(
    private readonly fields: Readonly<Record<string, string>>,
    private readonly what: string,
  ) {}

  text(name: string): string {
    return readString(this.fields[name], `${this.what} ${name}`);
  }

  optionalText(name: string): string | undefined {
    return this.fields[name];
  }

  int(name: string): number {
    return readInteger(this.fields[name], `${this.what} ${name}`);
  }

  optionalInt(name: string): number | undefined {
    return this.fields[name] === undefined ? undefined : this.int(name);
  }

  json(name: string): JsonValue | undefined {
    const text = this.fields[name];
    return text === undefined ? undefined : readJson(text, `${this.what} ${name}`);
  }
}

/** Sets `record[key]` to `value` unless it is undefined (the fact types have optional, not undefined, fields). */
function assign<T extends object, K extends keyof T>(record: T, key: K, value: T[K] | undefined): void {
  if (value !== undefined) record[key] = value;
}

function readErrorSummary(fields: FactFields): ErrorSummary | undefined {
  const value = fields.json('err');
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
function readJobFields(fields: FactFields): JobTransition {
  const fact: JobTransition = {
    at: fields.int('at'),
    jobId: fields.text('id'),
    jobType: fields.text('type'),
    queue: fields.text('q'),
    from: readOneOf(fields.text('from'), ['none', ...JOB_STATES], 'fact from'),
    to: readOneOf(fields.text('to'), JOB_STATES, 'fact to'),
    attempt: fields.int('n'),
  };
  assign(fact, 'workerId', fields.optionalText('w'));
  assign(fact, 'priority', fields.optionalInt('pri'));
  assign(fact, 'scheduledAt', fields.optionalInt('sched'));
  assign(fact, 'nextRetryAt', fields.optionalInt('retry'));
  assign(fact, 'maxAttempts', fields.optionalInt('max'));
  assign(fact, 'startedAt', fields.optionalInt('start'));
  assign(fact, 'enqueuedAt', fields.optionalInt('enq'));
  assign(fact, 'createdAt', fields.optionalInt('created'));
  assign(fact, 'error', readErrorSummary(fields));
  const deadLetter = fields.optionalText('dl');
  if (deadLetter !== undefined) fact.deadLetter = deadLetter === '1';
  assign(fact, 'reason', fields.optionalText('why'));
  assign(fact, 'actor', fields.optionalText('by'));
  assign(fact, 'traceparent', fields.optionalText('tp'));
  return fact;
}

function readProgressFact(fields: FactFields): ProgressFact {
  const fact: ProgressFact = {
    kind: 'progress',
    at: fields.int('at'),
    jobId: fields.text('id'),
    jobType: fields.text('type'),
    queue: fields.text('q'),
    workerId: fields.text('w'),
    attempt: fields.int('n'),
  };
  const progress = fields.optionalText('p');
  if (progress !== undefined) fact.progress = readNumber(Number(progress), 'fact progress');
  assign(fact, 'traceparent', fields.optionalText('tp'));
  return fact;
}

function readWorkerFact(fields: FactFields): WorkerFact {
  const fact: WorkerFact = {
    kind: 'worker',
    at: fields.int('at'),
    workerId: fields.text('w'),
    from: readKeyOf(fields.text('from'), WORKER_FROM, 'fact from'),
    to: readKeyOf(fields.text('to'), WORKER_TO, 'fact to'),
  };
  const reason = fields.optionalText('why');
  if (reason !== undefined) fact.reason = readKeyOf(reason, REMOVAL_REASONS, 'fact reason');
  const queues = fields.json('qs');
  if (queues !== undefined) fact.queues = readJsonArray(queues, 'fact queues').map((queue, i) => readString(queue, `fact queues[${i}]`));
  assign(fact, 'concurrency', fields.optionalInt('conc'));
  assign(fact, 'activeJobs', fields.optionalInt('active'));
  assign(fact, 'registeredAt', fields.optionalInt('reg'));
  assign(fact, 'lastBeatAt', fields.optionalInt('beat'));
  return fact;
}

function readQueueFact(fields: FactFields): QueueFact {
  const fact: QueueFact = { kind: 'queue', at: fields.int('at'), queue: fields.text('q'), paused: fields.text('paused') === '1' };
  assign(fact, 'actor', fields.optionalText('by'));
  return fact;
}

/** A fact from its flat field list (a stream entry's fields, or a returned transition). */
export function decodeFact(value: unknown): EventFact {
  const fields = new FactFields(readFlatHash(value, 'fact'), 'fact');
  const kind = fields.text('k');
  switch (kind) {
    case 'job':
      return { kind: 'job', ...readJobFields(fields) };
    case 'progress':
      return readProgressFact(fields);
    case 'worker':
      return readWorkerFact(fields);
    case 'queue':
      return readQueueFact(fields);
    default:
      return unexpectedReply('fact kind', kind);
  }
}

/** A transition a script returned (lib/ojs.lua transition(): a job fact). */
export function decodeTransition(value: unknown): JobTransition {
  const fields = new FactFields(readFlatHash(value, 'transition'), 'transition');
  if (fields.text('k') !== 'job') return unexpectedReply('transition', value);
  return readJobFields(fields);
}

export function decodeTransitions(value: unknown): JobTransition[] {
  return readArray(value, 'transitions').map(decodeTransition);
}

/** The facts of some stream entries, and the cursor of the last entry (fact or not). */
export interface FactEntries {
  facts: RecordedFact[];
  /** Absent when there were no entries. */
  lastCursor?: string;
}

/**
 * The facts of stream entries as XRANGE and XREAD return them
 * ({cursor, {field, value...}}...). An entry this server did not write (of
 * another version, or written by hand) is left out: it is no fact. Its
 * cursor still counts as read (`lastCursor`), so that no reader stalls on it.
 */
export function decodeFactEntries(value: unknown): FactEntries {
  const decoded: FactEntries = { facts: [] };
  for (const entry of readArray(value, 'fact entries')) {
    const [cursorValue, fields] = readArray(entry, 'fact entry');
    const cursor = readString(cursorValue, 'fact cursor');
    decoded.lastCursor = cursor;
    try {
      decoded.facts.push({ cursor, fact: decodeFact(fields) });
    } catch (error) {
      if (!(error instanceof OjsError)) throw error;
    }
  }
  return decoded;
}
