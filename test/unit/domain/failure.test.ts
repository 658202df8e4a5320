import { decideFailure } from '../../../src/domain/failure';
import { activeJob } from '../support/active-job';
import { DEFAULT_RETRY_POLICY } from '../../../src/domain/retry-policy';

const NOW = 1_000_000;

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
    expect(decideFailure(activeJob({ attempt: 3 }), { type: 'worker_death', message: '' }, { ...context, requeueAtOnce: true }).state).toBe(
      'discarded',
    );
  });
});

describe('failure decisions under a total timeout (timeouts.md 5.2, 9.1)', () => {
  const job = (overrides = {}) => activeJob({ createdAt: 0, timeoutMs: 10_000, totalTimeoutMs: NOW + 11_500, ...overrides });

  it('retries when the next attempt can still finish in time', () => {
    expect(decideFailure(job(), { type: 'Boom', message: '' }, context).state).toBe('retryable');
  });

  it('discards as total_timeout when the backoff plus one attempt would overrun it', () => {
    const outcome = decideFailure(job({ attempt: 2 }), { type: 'Boom', message: '' }, context);
    expect(outcome).toMatchObject({ state: 'discarded', error: { type: 'total_timeout', details: { timeout_kind: 'total' } } });
    expect(outcome.errors.map((e) => e.type)).toEqual(['Boom', 'total_timeout']);
  });

  it('never retries a total_timeout, whatever attempts remain', () => {
    expect(decideFailure(job(), { type: 'total_timeout', message: '' }, context).state).toBe('discarded');
  });
});
