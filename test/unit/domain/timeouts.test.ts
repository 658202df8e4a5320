import {
  activeExpiryCause,
  activeExpiryReport,
  leaseExpiry,
  softTimeoutAt,
  timeoutReport,
  waitingDeadline,
  waitingExpiryReport,
  withTimeoutDetails,
} from '../../../src/domain/timeouts';
import { activeJob } from '../support/active-job';

const START = 1_000_000;
const CONFIRM = 30_000;

describe('lease expiry: the earliest deadline of an active job', () => {
  it('is the visibility timeout after the last renewal when nothing else is closer', () => {
    expect(leaseExpiry(activeJob({ timeoutMs: 600_000 }), START + 5_000, true, CONFIRM)).toBe(START + 65_000);
  });

  it('is capped by the confirmation window until the worker confirms', () => {
    expect(leaseExpiry(activeJob(), START, false, CONFIRM)).toBe(START + CONFIRM);
  });

  it('is capped by the stall limit, the timeout plus grace period, and the total timeout', () => {
    const job = activeJob({ visibilityTimeoutMs: 600_000, timeoutMs: 600_000 });
    expect(leaseExpiry({ ...job, heartbeatTimeoutMs: 20_000 }, START, true, CONFIRM)).toBe(START + 20_000);
    expect(leaseExpiry({ ...job, timeoutMs: 10_000, gracePeriodMs: 5_000 }, START + 9_000, true, CONFIRM)).toBe(START + 15_000);
    expect(leaseExpiry({ ...job, totalTimeoutMs: START + 7_000 }, START, true, CONFIRM)).toBe(START + 7_000);
  });
});

describe('why an active job expired', () => {
  const at = (job = activeJob(), now: number) => activeExpiryCause(job, now, CONFIRM);

  it('is nothing while every deadline is ahead', () => {
    expect(at(activeJob(), START + 59_999)).toBeUndefined();
  });

  it('puts the total timeout first, then the execution timeout', () => {
    const job = activeJob({ timeoutMs: 10_000, gracePeriodMs: 0, totalTimeoutMs: START + 10_000 });
    expect(at(job, START + 10_000)).toBe('total_timeout');
    expect(at({ ...job, totalTimeoutMs: undefined }, START + 10_000)).toBe('timeout');
  });

  it('calls a lapse unconfirmed only when the confirmation window was the shorter limit', () => {
    const unconfirmed = activeJob({ lease: { workerId: 'w', token: 't', expiresAt: 0, renewedAt: START, isConfirmed: false } });
    expect(at(unconfirmed, START + CONFIRM)).toBe('unconfirmed');
    expect(activeExpiryCause(unconfirmed, START + 60_000, 60_000)).toBe('visibility_timeout');
  });

  it('names the shorter of visibility and stall limits, the visibility timeout on a tie', () => {
    expect(at(activeJob({ heartbeatTimeoutMs: 20_000 }), START + 20_000)).toBe('stalled');
    expect(at(activeJob({ visibilityTimeoutMs: 20_000 }), START + 20_000)).toBe('visibility_timeout');
    expect(at(activeJob(), START + 60_000)).toBe('visibility_timeout');
  });
});

describe('waiting deadlines', () => {
  const waiting = { ...activeJob(), state: 'available' as const, attempt: 0, createdAt: START, lease: undefined };

  it('is the earliest of expires_at, the total timeout and, before the first attempt, the enqueue TTL', () => {
    expect(waitingDeadline(waiting)).toBeUndefined();
    expect(waitingDeadline({ ...waiting, expiresAt: START + 9_000, enqueueTtlMs: 5_000, totalTimeoutMs: 7_000 })).toBe(START + 5_000);
    expect(waitingDeadline({ ...waiting, attempt: 1, enqueueTtlMs: 5_000, totalTimeoutMs: 7_000 })).toBe(START + 7_000);
  });

  it('reports the total timeout first, then the TTL, then expires_at', () => {
    const job = { ...waiting, expiresAt: START + 1_000, enqueueTtlMs: 1_000, totalTimeoutMs: 1_000 };
    expect(waitingExpiryReport(job, START + 1_000).type).toBe('total_timeout');
    expect(waitingExpiryReport({ ...job, totalTimeoutMs: undefined }, START + 1_000).type).toBe('enqueue_ttl_expired');
    expect(waitingExpiryReport({ ...job, totalTimeoutMs: undefined, enqueueTtlMs: undefined }, START + 1_000).type).toBe('expired');
  });
});

describe('soft timeouts and timeout reports', () => {
  it('signals at the execution timeout, or at the total timeout when that comes first', () => {
    expect(softTimeoutAt(activeJob({ timeoutMs: 10_000 }))).toBe(START + 10_000);
    expect(softTimeoutAt(activeJob({ timeoutMs: 10_000, totalTimeoutMs: START + 4_000 }))).toBe(START + 4_000);
  });

  it('records the data of timeouts.md section 8', () => {
    expect(timeoutReport('execution', 300_000, 305_400)).toEqual({
      type: 'timeout',
      message: 'job execution exceeded its timeout of 300 s',
      details: { timeout_kind: 'execution', limit_seconds: 300, elapsed_seconds: 305 },
    });
    expect(activeExpiryReport(activeJob(), 'stalled', START + 61_000).details).toEqual({
      timeout_kind: 'stalled',
      limit_seconds: 60,
      elapsed_seconds: 61,
    });
  });

  it('fills in the details a worker-reported timeout lacks, from the job, and keeps those it has', () => {
    const job = activeJob({ timeoutMs: 10_000 });
    const server = timeoutReport('execution', 10_000, 15_000);
    expect(withTimeoutDetails(job, server, START + 15_000)).toBe(server);
    expect(withTimeoutDetails(job, { type: 'timeout', message: 'took too long' }, START + 12_000).details).toEqual({
      timeout_kind: 'execution',
      limit_seconds: 10,
      elapsed_seconds: 12,
    });
    const boom = { type: 'Boom', message: '' };
    expect(withTimeoutDetails(job, boom, START)).toBe(boom);
  });
});
