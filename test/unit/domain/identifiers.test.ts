import {
  errorTypeProblem,
  hostnameProblem,
  jobIdProblem,
  labelProblem,
  leaseTokenProblem,
  queueNameProblem,
  workerIdProblem,
} from '../../../src/domain/identifiers';
import { DEFAULT_PAYLOAD_LIMITS, JOB_GROWTH_MAX_BYTES, DELIVERY_BUDGET_BYTES, payloadLimitsProblem } from '../../../src/domain/limits';
import { timestampProblem } from '../../../src/domain/timestamps';

describe('identifier rules', () => {
  it('takes job ids as lowercase UUIDv7s only', () => {
    expect(jobIdProblem('01961234-5678-7abc-8ef0-123456789abc')).toBeUndefined();
    for (const id of ['', 'nope', '01961234-5678-4abc-8ef0-123456789abc', '01961234-5678-7ABC-8EF0-123456789ABC']) {
      expect(jobIdProblem(id)).toBeDefined();
    }
  });

  it('keeps worker ids, lease tokens and labels to printable ASCII of bounded length', () => {
    expect(workerIdProblem('worker-1.host:42')).toBeUndefined();
    expect(workerIdProblem('w'.repeat(255))).toBeUndefined();
    expect(workerIdProblem('w'.repeat(256))).toContain('at most 255');
    // What the decoder makes of invalid UTF-8: two different ids must never become one.
    for (const id of ['', 'with space', 'caf\u00e9', 'bad\ufffd', 'tab\t']) expect(workerIdProblem(id)).toBeDefined();
    expect(leaseTokenProblem('t'.repeat(129))).toBeDefined();
    expect(labelProblem('region=eu')).toBeUndefined();
  });

  it('takes queue names and error types by their own rules', () => {
    expect(queueNameProblem('emails.high-priority')).toBeUndefined();
    expect(queueNameProblem('Emails')).toBeDefined();
    expect(queueNameProblem('q'.repeat(129))).toBeDefined();
    expect(errorTypeProblem('SmtpError')).toBeUndefined();
    expect(errorTypeProblem('')).toBe('is required');
    expect(errorTypeProblem('line\nbreak')).toContain('control');
    expect(hostnameProblem('')).toBeUndefined();
    expect(hostnameProblem('h\u0085st')).toContain('control');
  });
});

describe('timestamps', () => {
  it('takes times from the epoch to the end of year 9999, whole milliseconds', () => {
    expect(timestampProblem(0)).toBeUndefined();
    expect(timestampProblem(Date.UTC(9999, 11, 31, 23, 59, 59, 999))).toBeUndefined();
    for (const ms of [-1, Date.UTC(10000, 0, 1), Number.NaN, 1.5, 1e16]) expect(timestampProblem(ms)).toBeDefined();
  });
});

describe('payload limits', () => {
  it('default to 1 MiB for a job and for a result, which fit one Fetch message with everything a job grows', () => {
    expect(DEFAULT_PAYLOAD_LIMITS).toEqual({ maxJobBytes: 1_048_576, maxResultBytes: 1_048_576 });
    expect(payloadLimitsProblem(DEFAULT_PAYLOAD_LIMITS)).toBeUndefined();
    expect(JOB_GROWTH_MAX_BYTES + 2 * 1_048_576).toBeLessThanOrEqual(DELIVERY_BUDGET_BYTES);
  });

  it('refuse limits that could make a job undeliverable', () => {
    const room = DELIVERY_BUDGET_BYTES - JOB_GROWTH_MAX_BYTES;
    expect(payloadLimitsProblem({ maxJobBytes: room, maxResultBytes: 0 })).toBeUndefined();
    expect(payloadLimitsProblem({ maxJobBytes: room, maxResultBytes: 1 })).toContain('at most');
  });
});
