import type { Job } from '../../../src/domain/job';
import { DEFAULT_RETRY_POLICY } from '../../../src/domain/retry-policy';

/** An active job held by worker "w" since `startedAt`, for domain tests; override what a test is about. */
export function activeJob(overrides: Partial<Job> = {}, startedAt = 1_000_000): Job {
  return {
    specversion: '1.0',
    id: 'job-1',
    type: 'test.job',
    queue: 'default',
    args: [],
    meta: {},
    priority: 0,
    timeoutMs: 60_000,
    gracePeriodMs: 30_000,
    heartbeatTimeoutMs: 60_000,
    retry: { ...DEFAULT_RETRY_POLICY, jitter: false },
    visibilityTimeoutMs: 60_000,
    state: 'active',
    attempt: 1,
    createdAt: 0,
    startedAt,
    errors: [],
    deadLetter: false,
    lease: { workerId: 'w', token: 't', expiresAt: startedAt + 60_000, renewedAt: startedAt, isConfirmed: true },
    ...overrides,
  };
}
