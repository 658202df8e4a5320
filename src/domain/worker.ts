import { workerStateConflict, type FieldViolation } from './errors';
import { hostnameProblem, labelProblem, queueNameProblem, workerIdProblem } from './identifiers';
import { DEFAULT_QUEUE } from './job-submission';
import type { Principal } from './principal';
import { MAX_LABELS_PER_WORKER, MAX_QUEUES_PER_WORKER } from './limits';
import { timestampProblem } from './timestamps';

/**
 * Worker lifecycle (worker-protocol section 2):
 * - running: fetching and processing jobs;
 * - quiet: not fetching, finishing held jobs; may return to running;
 * - terminate: finishing or failing held jobs, then exiting; never goes back.
 * "terminated" is not a state a worker reports: it is the worker's removal.
 */
export type WorkerState = 'running' | 'quiet' | 'terminate';

/** Every worker state with the states it may move to (its keys are the worker states). */
export const NEXT_WORKER_STATES: Readonly<Record<WorkerState, readonly WorkerState[]>> = {
  running: ['quiet', 'terminate'],
  quiet: ['running', 'terminate'],
  terminate: [],
};

export function canWorkerMove(from: WorkerState, to: WorkerState): boolean {
  return from === to || NEXT_WORKER_STATES[from].includes(to);
}

export interface WorkerRegistration {
  workerId: string;
  hostname: string;
  pid: number;
  /** Ordered: the first queue is consumed first. */
  queues: string[];
  concurrency: number;
  labels: string[];
  startedAt?: number;
}

/** A registered worker as the server tracks it. Times are epoch milliseconds. */
export interface Worker extends WorkerRegistration {
  /**
   * The name of the principal that registered it ('' for ANONYMOUS): only
   * that principal may use the worker id while the worker lives.
   */
  owner: string;
  registeredAt: number;
  /** The state the worker last reported. */
  state: WorkerState;
  /** An operator directive the worker has not yet reported reaching. */
  directive?: WorkerState;
  lastBeatAt: number;
  /** Sequence of the last beat accepted; later beats must be higher. */
  lastSequence: number;
  /** The active_job_ids of the last accepted beat. */
  reportedJobIds: string[];
}

/** Whether `principal` registered the worker: only its owner may use a worker id while the worker lives. */
export function isOwnedBy(worker: Pick<Worker, 'owner'>, principal: Pick<Principal, 'name'>): boolean {
  return worker.owner === principal.name;
}

export const DEFAULT_CONCURRENCY = 10;
export const MAX_CONCURRENCY = 10_000;

/**
 * The state a worker is told to be in. A pending directive wins; otherwise
 * the server echoes what the worker reports, so that a worker that quieted
 * itself (SIGTSTP) is not pushed back to running by its own heartbeat.
 */
export function desiredState(worker: Pick<Worker, 'state' | 'directive'>): WorkerState {
  return worker.directive ?? worker.state;
}

/**
 * Applies a state reported in a beat. A worker never moves backward from
 * terminate, and a directive is dropped once the worker reports it (or once
 * it can no longer be reached).
 */
export function afterReport(worker: Pick<Worker, 'state' | 'directive'>, reported: WorkerState): Pick<Worker, 'state' | 'directive'> {
  const state = canWorkerMove(worker.state, reported) ? reported : worker.state;
  const directive =
    worker.directive !== undefined && worker.directive !== state && canWorkerMove(state, worker.directive) ? worker.directive : undefined;
  return directive === undefined ? { state } : { state, directive };
}

/**
 * The worker after an operator directs it to `target`. Throws an
 * `invalid_state` OjsError for a directive that would move it backward from
 * terminate. A directive to the state the worker last reported is kept
 * while another is pending: the worker may already be on its way to that
 * one, and its next beat, which reports it, must be taken as obeying the
 * directive it saw, not as a change of its own (quiet, then running at
 * once, must leave it running).
 */
export function afterDirective(worker: Worker, target: WorkerState): Pick<Worker, 'state' | 'directive'> {
  const current = desiredState(worker);
  if (!canWorkerMove(current, target) || !canWorkerMove(worker.state, target)) {
    throw workerStateConflict(worker.workerId, current, target);
  }
  return target === worker.state && worker.directive === undefined ? { state: worker.state } : { state: worker.state, directive: target };
}

/** Validates a registration, applying the protocol defaults (worker-protocol appendix A). */
export function normalizeRegistration(input: WorkerRegistration, violations: FieldViolation[]): WorkerRegistration {
  const check = (field: string, problem: string | undefined): void => {
    if (problem !== undefined) violations.push({ field, description: problem });
  };
  check('worker_id', workerIdProblem(input.workerId));
  check('hostname', hostnameProblem(input.hostname));
  if (!Number.isInteger(input.pid) || input.pid < 0) check('pid', 'must be a non-negative integer');
  const queues = input.queues.length === 0 ? [DEFAULT_QUEUE] : input.queues;
  if (queues.length > MAX_QUEUES_PER_WORKER) check('queues', `must list at most ${MAX_QUEUES_PER_WORKER} queues`);
  else queues.forEach((queue, i) => check(`queues[${i}]`, queueNameProblem(queue)));
  if (new Set(queues).size !== queues.length) check('queues', 'must not repeat a queue');
  if (input.labels.length > MAX_LABELS_PER_WORKER) check('labels', `must list at most ${MAX_LABELS_PER_WORKER} labels`);
  else input.labels.forEach((label, i) => check(`labels[${i}]`, labelProblem(label)));
  const concurrency = input.concurrency === 0 ? DEFAULT_CONCURRENCY : input.concurrency;
  if (!Number.isInteger(concurrency) || concurrency < 1 || concurrency > MAX_CONCURRENCY) {
    check('concurrency', `must be from 1 to ${MAX_CONCURRENCY}`);
  }
  if (input.startedAt !== undefined) check('started_at', timestampProblem(input.startedAt));
  return { ...input, queues, concurrency };
}

/** At most this many bytes describe a worker in an answer (3 bytes a character, ids of held jobs, fixed fields). */
export function workerSizeBound(worker: WorkerRegistration, heldJobs: number): number {
  const chars =
    worker.workerId.length + worker.hostname.length + [...worker.queues, ...worker.labels].reduce((sum, name) => sum + name.length + 2, 0);
  return 3 * chars + 40 * heldJobs + 256;
}
