import { OjsError } from '../../../src/domain/errors';
import { JOB_STATES, type JobState } from '../../../src/domain/job';
import { assertTransition, canTransition, isTerminal } from '../../../src/domain/job-state-machine';
import { thrownBy } from '../../support/thrown';

/** ojs-core 6.3, plus the discards that expiry requires of jobs that never started. */
const ALLOWED: [JobState, JobState][] = [
  ['scheduled', 'available'],
  ['scheduled', 'cancelled'],
  ['scheduled', 'discarded'],
  ['pending', 'available'],
  ['pending', 'cancelled'],
  ['pending', 'discarded'],
  ['available', 'active'],
  ['available', 'cancelled'],
  ['available', 'discarded'],
  ['active', 'completed'],
  ['active', 'retryable'],
  ['active', 'available'],
  ['active', 'cancelled'],
  ['active', 'discarded'],
  ['retryable', 'available'],
  ['retryable', 'cancelled'],
  ['retryable', 'discarded'],
  ['discarded', 'available'],
];

describe('the job state machine', () => {
  const isAllowed = (from: JobState, to: JobState): boolean => ALLOWED.some(([f, t]) => f === from && t === to);
  const pairs = JOB_STATES.flatMap((from) => JOB_STATES.map((to) => [from, to] as const));

  it.each(pairs)('%s -> %s is allowed exactly when the table says so', (from, to) => {
    expect(canTransition(from, to)).toBe(isAllowed(from, to));
  });

  it('rejects an invalid transition with an invalid_state error naming both states', () => {
    expect(() => assertTransition('j1', 'completed', 'available')).toThrow(OjsError);
    expect(thrownBy(() => assertTransition('j1', 'completed', 'available'))).toMatchObject({
      code: 'invalid_state',
      metadata: { from_state: 'completed', to_state: 'available' },
    });
  });

  it('treats completed, cancelled and discarded as terminal', () => {
    expect(JOB_STATES.filter(isTerminal)).toEqual(['completed', 'cancelled', 'discarded']);
  });
});
