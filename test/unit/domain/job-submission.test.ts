import { OjsError } from '../../../src/domain/errors';
import { sha256Hex } from '../../../lib/sha256';
import { DEFAULT_PAYLOAD_LIMITS } from '../../../src/domain/limits';
import { buildJob, buildJobs, type JobCreation, type JobSubmission, type SubmissionProblems } from '../../../src/domain/job-submission';
import { thrownBy } from '../../support/thrown';

const NOW = Date.parse('2026-03-01T00:00:00Z');
const creation: JobCreation = {
  now: NOW,
  newId: () => '01961234-5678-7abc-8ef0-123456789abc',
  digest: sha256Hex,
  defaults: { timeoutMs: 1_800_000, visibilityTimeoutMs: 1_800_000, gracePeriodMs: 30_000, heartbeatTimeoutMs: 60_000 },
  limits: DEFAULT_PAYLOAD_LIMITS,
  pending: false,
};

function build(submission: Partial<JobSubmission>, overrides: Partial<JobCreation> = {}) {
  const problems: SubmissionProblems = { violations: [], oversized: [], answerBytes: 0 };
  const job = buildJob({ type: 'email.send', args: [], ...submission }, { ...creation, ...overrides }, 'job', problems);
  const { violations } = problems;
  return { job, violations, oversized: problems.oversized, fields: violations.map((v) => v.field) };
}

describe('building a job from a submission', () => {
  it('fills in the defaults and the system-managed attributes', () => {
    const { job, violations } = build({});
    expect(violations).toEqual([]);
    expect(job).toMatchObject({
      specversion: '1.0',
      id: '01961234-5678-7abc-8ef0-123456789abc',
      queue: 'default',
      priority: 0,
      meta: {},
      timeoutMs: 1_800_000,
      visibilityTimeoutMs: 1_800_000,
      state: 'available',
      attempt: 0,
      createdAt: NOW,
      enqueuedAt: NOW,
      errors: [],
      deadLetter: false,
    });
  });

  it('resolves the timeout limits of timeouts.md section 6, 0 meaning none or the default', () => {
    const defaults = build({}).job;
    expect(defaults).toMatchObject({ gracePeriodMs: 30_000, heartbeatTimeoutMs: 60_000 });
    expect(defaults.totalTimeoutMs ?? defaults.enqueueTtlMs).toBeUndefined();
    const { job } = build({
      timeoutSeconds: 60,
      totalTimeoutSeconds: 600,
      enqueueTtlSeconds: 30,
      gracePeriodSeconds: 0,
      heartbeatTimeoutSeconds: 90,
    });
    expect(job).toMatchObject({
      timeoutMs: 60_000,
      totalTimeoutMs: 600_000,
      enqueueTtlMs: 30_000,
      gracePeriodMs: 0,
      heartbeatTimeoutMs: 90_000,
    });
  });

  it('keeps a client-chosen UUIDv7 and per-job timeouts', () => {
    const id = '01961234-5678-7abc-9ef0-123456789abc';
    const { job } = build({ id, timeoutSeconds: 30, visibilityTimeoutSeconds: 7200 });
    expect(job).toMatchObject({ id, timeoutMs: 30_000, visibilityTimeoutMs: 7_200_000 });
  });

  it('starts scheduled when scheduled_at is in the future, available when it has passed, pending when staged', () => {
    expect(build({ scheduledAt: NOW + 1 }).job.state).toBe('scheduled');
    expect(build({ scheduledAt: NOW + 1 }).job.enqueuedAt).toBeUndefined();
    expect(build({ scheduledAt: NOW - 1 }).job.state).toBe('available');
    expect(build({ scheduledAt: NOW + 1 }, { pending: true }).job.state).toBe('pending');
  });

  it.each<[string, Partial<JobSubmission>, string]>([
    ['an empty type', { type: '' }, 'job.type'],
    ['an upper-case type', { type: 'Email.send' }, 'job.type'],
    ['a type with an empty segment', { type: 'email..send' }, 'job.type'],
    ['a type segment starting with a digit', { type: 'email.1send' }, 'job.type'],
    ['a queue with upper case', { queue: 'Default' }, 'job.queue'],
    ['a queue starting with a dash', { queue: '-q' }, 'job.queue'],
    ['a queue over 128 characters', { queue: 'q'.repeat(129) }, 'job.queue'],
    ['a non-UUIDv7 id', { id: '6ba7b810-9dad-41d1-80b4-00c04fd430c8' }, 'job.id'],
    ['an upper-case id', { id: '01961234-5678-7ABC-8EF0-123456789ABC' }, 'job.id'],
    ['a NaN argument', { args: ['ok', Number.NaN] }, 'job.args[1]'],
    ['an argument without a kind', { args: [undefined] }, 'job.args[0]'],
    ['an infinite number deep in meta', { meta: { a: { b: [Infinity] } } }, 'job.meta'],
    ['meta over 64 KB', { meta: { big: 'x'.repeat(70_000) } }, 'job.meta'],
    ['a priority out of range', { priority: 1001 }, 'job.priority'],
    ['a negative timeout', { timeoutSeconds: -5 }, 'job.timeout'],
    ['a negative visibility timeout', { visibilityTimeoutSeconds: -1 }, 'job.visibility_timeout'],
    ['a total timeout shorter than the timeout', { timeoutSeconds: 60, totalTimeoutSeconds: 59 }, 'job.total_timeout'],
    ['a negative enqueue TTL', { enqueueTtlSeconds: -1 }, 'job.enqueue_ttl'],
    ['a fractional grace period', { gracePeriodSeconds: 1.5 }, 'job.grace_period'],
    ['a negative heartbeat timeout', { heartbeatTimeoutSeconds: -1 }, 'job.heartbeat_timeout'],
    ['another specversion', { specversion: '2.0' }, 'job.specversion'],
    ['a bad retry interval', { retry: { initialInterval: '5 seconds' } }, 'job.retry.initial_interval'],
  ])('refuses %s, naming %s', (_, submission, field) => {
    expect(build(submission).fields).toEqual([field]);
  });

  it('reports every problem of a batch at once, with the index of each job', () => {
    const attempt = (): unknown =>
      buildJobs(
        [
          { type: 'ok.job', args: [] },
          { type: 'Bad', queue: 'BAD', args: [] },
        ],
        creation,
      );
    expect(attempt).toThrow(OjsError);
    const error = thrownBy(attempt);
    expect(error).toMatchObject({ code: 'invalid_payload' });
    expect((error as OjsError).fieldViolations.map((v) => v.field)).toEqual(['jobs[1].type', 'jobs[1].queue']);
    expect((error as OjsError).message).toContain('jobs[1].type');
  });
});
