import { invalidTransition } from './errors';
import { JOB_STATES, type JobState } from './job';

/**
 * Every allowed job transition (ojs-core section 6.3), plus the discards that
 * the expiry and timeout rules require of jobs that never started
 * (expires_at: "MUST transition the job to discarded"). Anything not listed
 * is refused.
 */
const NEXT_STATES: Readonly<Record<JobState, readonly JobState[]>> = {
  scheduled: ['available', 'cancelled', 'discarded'],
  pending: ['available', 'cancelled', 'discarded'],
  available: ['active', 'cancelled', 'discarded'],
  // active -> available: lease recovery of a dead worker, or a claim that
  // could not be delivered.
  active: ['completed', 'retryable', 'available', 'cancelled', 'discarded'],
  retryable: ['available', 'cancelled', 'discarded'],
  completed: [],
  cancelled: [],
  // Manual retry from the dead letter set is the only way out of a terminal state.
  discarded: ['available'],
};

const TERMINAL: ReadonlySet<JobState> = new Set(['completed', 'cancelled', 'discarded']);

export function isTerminal(state: JobState): boolean {
  return TERMINAL.has(state);
}

/** The states from which a job may move to `to`. */
export function statesLeadingTo(to: JobState): JobState[] {
  return JOB_STATES.filter((from) => NEXT_STATES[from].includes(to));
}

export function canTransition(from: JobState, to: JobState): boolean {
  return NEXT_STATES[from].includes(to);
}

/** Throws an `invalid_state` OjsError unless `from -> to` is allowed. */
export function assertTransition(jobId: string, from: JobState, to: JobState): void {
  if (!canTransition(from, to)) throw invalidTransition(jobId, from, to);
}
