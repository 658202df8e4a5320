import { ERROR_HISTORY_LIMIT } from '../../../src/domain/job';
import { appendError, BACKTRACE_MAX_CHARS, BACKTRACE_MAX_FRAMES, stampError } from '../../../src/domain/job-error';
import { leaseProblem } from '../../../src/domain/lease';

describe('job errors', () => {
  it('keeps at most 50 backtrace frames', () => {
    const frames = Array.from({ length: 80 }, (_, i) => `at f${i}`);
    expect(stampError({ type: 'E', message: 'm', backtrace: frames }, 1, 0).backtrace).toHaveLength(BACKTRACE_MAX_FRAMES);
  });

  it('keeps at most 10,000 characters of backtrace, cutting the last frame that overflows', () => {
    const frames = Array.from({ length: 30 }, () => 'x'.repeat(900));
    const kept = stampError({ type: 'E', message: 'm', backtrace: frames }, 1, 0).backtrace;
    expect(kept.join('').length).toBe(BACKTRACE_MAX_CHARS);
    expect(kept).toHaveLength(12);
  });

  it('keeps the most recent errors once the history is full', () => {
    let history = [] as ReturnType<typeof appendError>;
    for (let attempt = 1; attempt <= ERROR_HISTORY_LIMIT + 5; attempt++) {
      history = appendError(history, stampError({ type: 'E', message: '' }, attempt, attempt));
    }
    expect(history).toHaveLength(ERROR_HISTORY_LIMIT);
    expect(history[0]!.attempt).toBe(6);
    expect(history.at(-1)!.attempt).toBe(ERROR_HISTORY_LIMIT + 5);
  });
});

describe('leases', () => {
  const job = { state: 'active', lease: { workerId: 'w1', token: 't2', expiresAt: 0 } } as const;

  it('accepts only the reserving worker with the token of the current attempt', () => {
    expect(leaseProblem(job as never, 'w1', 't2')).toBeUndefined();
    expect(leaseProblem(job as never, 'w2', 't2')).toBe('other_worker');
    expect(leaseProblem(job as never, 'w1', 't1')).toBe('stale_lease');
    expect(leaseProblem({ state: 'completed' } as never, 'w1', 't2')).toBe('not_active');
  });
});
