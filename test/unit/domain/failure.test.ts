import { decideFailure } from '../../../src/domain/failure';
import type { Job } from '../../../src/domain/job';
import { DEFAULT_RETRY_POLICY } from '../../../src/domain/retry-policy';

const NOW = 1_000_000;

function activeJob(overrides: Partial<Job> = {}): Job {
  return {
    specversion: '1.0',
    id: 'job-1',
    type: 'test.job',
    queue: 'default',
    args: [],
    meta: {},
    priority: 0,
    timeoutMs: 60_000,
    retry: { ...DEFAULT_RETRY_POLICY, jitter: false },
    visibilityTimeoutMs: 60_000,
    state: 'active',
    attempt: 1,
    createdAt: 0,
    errors: [],
    deadLetter: false,
    lease: { workerId: 'w', token: 't', expiresAt: NOW + 1, isConfirmed: true },
    ...overrides,
  };
}

const context = { now: NOW, random: () => 0.5 };

describe('failure decisions', () => {
  it('schedules a retry after the backoff while attempts remain', () => {
    const outcome = decideFailure(activeJob({ attempt: 2 }), { type: 'Boom', message: 'x' }, context);
    expect(outcome).toMatchObject({ state: 'retryable', nextRetryAt: NOW + 2_000 });
    expect(outcome.error).toMatchObject({ type: 'Boom', message: 'x', attempt: 2, occurredAt: NOW });
  });

  it('discards when the last attempt fails', () => {
    expect(decideFailure(activeJob({ attempt: 3 }), { type: 'Boom', message: '' }, context)).toMatchObject({
      state: 'discarded',
      deadLetter: false,
    });
  });

  it('discards at once when max_attempts is 0 or 1', () => {
    for (const maxAttempts of [0, 1]) {
      const job = activeJob({ retry: { ...DEFAULT_RETRY_POLICY, maxAttempts } });
      expect(decideFailure(job, { type: 'Boom', message: '' }, context).state).toBe('discarded');
    }
  });

  it('dead-letters exhausted jobs whose policy says so', () => {
    const job = activeJob({ attempt: 3, retry: { ...DEFAULT_RETRY_POLICY, onExhaustion: 'dead_letter' } });
    expect(decideFailure(job, { type: 'Boom', message: '' }, context)).toMatchObject({ state: 'discarded', deadLetter: true });
  });

  it('never retries a non-retryable error type', () => {
    const job = activeJob({ retry: { ...DEFAULT_RETRY_POLICY, nonRetryableErrors: ['auth.*'] } });
    expect(decideFailure(job, { type: 'auth.denied', message: '' }, context).state).toBe('discarded');
  });

  it.each([
    ['discard', false],
    ['fail', false],
    ['dead_letter', true],
  ] as const)('lets a handler code %s override the remaining attempts', (code, deadLetter) => {
    expect(decideFailure(activeJob(), { type: 'Boom', message: '', code }, context)).toMatchObject({ state: 'discarded', deadLetter });
  });

  it('applies the policy normally for the RETRY code', () => {
    expect(decideFailure(activeJob(), { type: 'Boom', message: '', code: 'retry' }, context).state).toBe('retryable');
  });

  it('requeues at once, without backoff, for an attempt lost with its worker', () => {
    expect(decideFailure(activeJob(), { type: 'worker_death', message: '' }, { ...context, requeueAtOnce: true }).state).toBe('available');
    expect(
      decideFailure(activeJob({ attempt: 3 }), { type: 'worker_death', message: '' }, { ...context, requeueAtOnce: true }).state,
    ).toBe('discarded');
  });
});
