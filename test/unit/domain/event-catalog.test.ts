import { eventsOf, heartbeatEvents, parseEventId, type LifecycleEvent } from '../../../src/domain/event-catalog';
import type { EventFact, JobFact } from '../../../src/domain/event-facts';

const AT = Date.parse('2026-06-01T10:30:00.000Z');
const TRACEPARENT = '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01';

function job(fields: Partial<JobFact> & Pick<JobFact, 'from' | 'to'>): JobFact {
  return { kind: 'job', at: AT, jobId: 'j1', jobType: 'email.send', queue: 'email', attempt: 1, ...fields };
}

function events(fact: EventFact, cursor = '1780000000000001'): LifecycleEvent[] {
  return eventsOf({ cursor, fact }, 'billing');
}

describe('the events a fact stands for', () => {
  it('gives each event the envelope of ojs-events section 2, and job_id and state in its data', () => {
    const [enqueued] = events(job({ from: 'none', to: 'available', attempt: 0, priority: 5, traceparent: TRACEPARENT }));
    expect(enqueued).toEqual({
      id: 'evt_1780000000000001.0',
      type: 'job.enqueued',
      source: 'ojs://billing/api',
      time: AT,
      subject: 'j1',
      data: {
        job_id: 'j1',
        job_type: 'email.send',
        queue: 'email',
        state: 'available',
        trace_id: '4bf92f3577b34da6a3ce929d0e0e4736',
        priority: 5,
      },
      queue: 'email',
      jobType: 'email.send',
      jobId: 'j1',
    });
  });

  it('tells the whole life of a job that failed, retried and completed, in lifecycle order', () => {
    const error = { type: 'SmtpError', message: 'refused' };
    const life = [
      job({ from: 'none', to: 'scheduled', attempt: 0, scheduledAt: AT + 60_000 }),
      job({ from: 'scheduled', to: 'available', attempt: 0 }),
      job({ from: 'available', to: 'active', workerId: 'w1', startedAt: AT }),
      job({ from: 'active', to: 'retryable', workerId: 'w1', startedAt: AT - 1_333, error, maxAttempts: 3, nextRetryAt: AT + 2_000 }),
      job({ from: 'retryable', to: 'available' }),
      job({ from: 'available', to: 'active', attempt: 2, workerId: 'w2', startedAt: AT }),
      job({ from: 'active', to: 'completed', attempt: 2, workerId: 'w2', startedAt: AT - 250 }),
    ].flatMap((fact) => events(fact));
    expect(life.map((e) => [e.type, e.source, e.data['reason']])).toEqual([
      ['job.scheduled', 'ojs://billing/api', undefined],
      ['job.enqueued', 'ojs://billing/scheduler', 'due'],
      ['job.started', 'ojs://billing/workers/w1', undefined],
      ['job.failed', 'ojs://billing/workers/w1', undefined],
      ['job.retrying', 'ojs://billing/workers/w1', undefined],
      ['job.enqueued', 'ojs://billing/scheduler', 'retry'],
      ['job.started', 'ojs://billing/workers/w2', undefined],
      ['job.completed', 'ojs://billing/workers/w2', undefined],
    ]);
    const failed = life[3]!;
    expect(failed.data).toMatchObject({
      attempt: 1,
      duration_ms: 1_333,
      error: { code: 'SmtpError', message: 'refused', retryable: true },
    });
    expect(life[4]!.data).toMatchObject({ max_attempts: 3, next_retry_at: '2026-06-01T10:30:02.000Z' });
    expect(life.at(-1)!.data).toMatchObject({ attempt: 2, duration_ms: 250, state: 'completed' });
  });

  it('numbers the events of one fact, and reads an event id back to its fact and index', () => {
    const [failed, discarded] = events(
      job({ from: 'active', to: 'discarded', workerId: 'w1', error: { type: 'Boom', message: '' }, deadLetter: true }),
      '427',
    );
    expect([failed!.id, discarded!.id]).toEqual(['evt_427.0', 'evt_427.1']);
    expect(discarded).toMatchObject({
      type: 'job.discarded',
      data: { total_attempts: 1, dead_letter: true, last_error: { code: 'Boom' } },
    });
    expect(parseEventId('evt_427.1')).toEqual({ cursor: '427', n: 1 });
    for (const id of ['427', 'evt_42-7.1', 'evt_x.0', 'evt_99999999999999999.0', 'evt_9007199254740993.0'])
      expect(parseEventId(id)).toBeUndefined();
  });

  it('adds the timeout event to the failure or expiry a timeout caused, as the scheduler', () => {
    const details = { timeout_kind: 'execution', limit_seconds: 10, elapsed_seconds: 40 };
    const reclaimed = events(
      job({ from: 'active', to: 'retryable', workerId: 'w1', error: { type: 'timeout', message: '', details }, maxAttempts: 3 }),
    );
    expect(reclaimed.map((e) => [e.type, e.source])).toEqual([
      ['job.failed', 'ojs://billing/scheduler'],
      ['job.retrying', 'ojs://billing/scheduler'],
      ['job.timeout', 'ojs://billing/scheduler'],
    ]);
    expect(reclaimed[2]!.data).toMatchObject({ worker_id: 'w1', attempt: 1, ...details });
    const ttl = { timeout_kind: 'enqueue_ttl', limit_seconds: 30, elapsed_seconds: 31 };
    const expired = events(
      job({
        from: 'available',
        to: 'discarded',
        attempt: 0,
        createdAt: AT - 31_000,
        error: { type: 'enqueue_ttl_expired', message: '', details: ttl },
      }),
    );
    expect(expired.map((e) => e.type)).toEqual(['job.expired', 'job.ttl_expired']);
    expect(expired[0]!.data).toMatchObject({
      created_at: '2026-06-01T10:29:29.000Z',
      expired_at: '2026-06-01T10:30:00.000Z',
      ttl_ms: 30_000,
    });
  });

  it('says a failed attempt requeued at once with job.failed and job.retrying only', () => {
    const died = events(
      job({ from: 'active', to: 'available', workerId: 'w1', error: { type: 'worker_death', message: '' }, maxAttempts: 3 }),
    );
    expect(died.map((e) => [e.type, e.data['next_retry_at'] ?? null])).toEqual([
      ['job.failed', null],
      ['job.retrying', '2026-06-01T10:30:00.000Z'],
    ]);
    expect(events(job({ from: 'active', to: 'available', reason: 'undelivered' })).map((e) => [e.type, e.data['reason']])).toEqual([
      ['job.enqueued', 'undelivered'],
    ]);
  });

  it('tells cancellations, workers and queues', () => {
    expect(events(job({ from: 'active', to: 'cancelled', workerId: 'w1', actor: 'ops', reason: 'superseded' }))[0]).toMatchObject({
      type: 'job.cancelled',
      source: 'ojs://billing/api',
      data: { cancelled_by: 'ops', reason: 'superseded', state: 'cancelled' },
    });
    const worker = (fields: Partial<Extract<EventFact, { kind: 'worker' }>>): EventFact => ({
      kind: 'worker',
      at: AT,
      workerId: 'w1',
      from: 'running',
      to: 'quiet',
      ...fields,
    });
    expect(events(worker({ from: 'none', to: 'running', queues: ['email'], concurrency: 5 }))[0]).toMatchObject({
      type: 'worker.started',
      subject: 'w1',
      data: { worker_id: 'w1', queues: ['email'], concurrency: 5 },
    });
    expect(events(worker({ activeJobs: 2 }))[0]).toMatchObject({ type: 'worker.quiet', data: { active_jobs: 2 } });
    expect(events(worker({ from: 'quiet', to: 'running' }))).toEqual([]);
    expect(events(worker({ to: 'removed', reason: 'deregistered', registeredAt: AT - 1_000 }))[0]).toMatchObject({
      type: 'worker.stopped',
      data: { reason: 'shutdown', uptime_ms: 1_000 },
    });
    expect(events(worker({ to: 'removed', reason: 'dead', lastBeatAt: AT - 30_000, activeJobs: 1 }))[0]).toMatchObject({
      type: 'worker.dead',
    });
    expect(events({ kind: 'queue', at: AT, queue: 'email', paused: true, actor: 'ops' })[0]).toMatchObject({
      type: 'queue.paused',
      subject: 'email',
      data: { queue: 'email', paused_by: 'ops' },
    });
  });

  it('tells cron.triggered and cron.skipped as ojs-cron 9 shows them, as the scheduler', () => {
    const schedule = {
      kind: 'schedule',
      at: AT + 123,
      name: 'daily-report',
      expression: '0 9 * * *',
      timezone: 'America/New_York',
    } as const;
    const tick = Date.parse('2026-06-01T13:00:00.000Z');
    const base = {
      cron_name: 'daily-report',
      cron_expression: '0 9 * * *',
      timezone: 'America/New_York',
      scheduled_time: '2026-06-01T13:00:00.000Z',
    };
    const [triggered] = events({ ...schedule, tick, jobId: 'j1', jobType: 'report.generate', queue: 'reports', runCount: 43 });
    expect(triggered).toMatchObject({
      type: 'cron.triggered',
      source: 'ojs://billing/scheduler',
      subject: 'daily-report',
      queue: 'reports',
      jobId: 'j1',
      data: { ...base, job_id: 'j1', job_type: 'report.generate', run_count: 43, actual_time: '2026-06-01T10:30:00.123Z' },
    });
    const [overlap] = events({ ...schedule, tick, jobId: 'j0', jobType: 'report.generate', queue: 'reports', reason: 'overlap_skip' });
    expect(overlap).toMatchObject({ type: 'cron.skipped', data: { ...base, reason: 'overlap_skip', active_job_id: 'j0' } });
    const [missed] = events({
      ...schedule,
      tick,
      reason: 'missed',
      missedCount: 3,
      lastMissed: tick + 2 * 86_400_000,
      isCountAtLeast: false,
    });
    expect(missed?.data).toEqual({
      ...base,
      reason: 'missed',
      missed_count: 3,
      last_missed_time: '2026-06-03T13:00:00.000Z',
      missed_count_is_at_least: false,
    });
  });

  it('tells rate_limit.exceeded and rate_limit.released as ojs-rate-limiting 11.1 shows them, keyed by queue', () => {
    const limit = { kind: 'rate_limit', at: AT, queue: 'email', strategy: 'rate' } as const;
    const [exceeded] = events({ ...limit, change: 'exceeded', limit: 10, current: 10 });
    expect(exceeded).toEqual({
      id: 'evt_1780000000000001.0',
      type: 'rate_limit.exceeded',
      source: 'ojs://billing/scheduler',
      time: AT,
      subject: 'queue:email',
      data: { key: 'queue:email', strategy: 'rate', limit: 10, current: 10 },
      queue: 'email',
    });
    const [released] = events({ ...limit, strategy: 'concurrency', change: 'released', jobId: 'j7' });
    expect(released).toMatchObject({
      type: 'rate_limit.released',
      source: 'ojs://billing/scheduler',
      jobId: 'j7',
      data: { key: 'queue:email', strategy: 'concurrency', job_id: 'j7' },
    });
    // Released by clearing the limits: no job started it, an operator did.
    const [cleared] = events({ ...limit, change: 'released' });
    expect(cleared).toMatchObject({ source: 'ojs://billing/api', data: { key: 'queue:email', strategy: 'rate' } });
    expect(cleared!.jobId).toBeUndefined();
  });

  it('makes live heartbeat events from a beat: the worker, then each job whose lease it renewed', () => {
    const lease = { jobId: 'j1', jobType: 'email.send', queue: 'email', attempt: 2, visibleUntil: AT + 60_000 };
    const live = heartbeatEvents({ at: AT, workerId: 'w1', state: 'running', jobs: [lease] }, 'billing');
    expect(live.map((e) => [e.type, e.subject])).toEqual([
      ['worker.heartbeat', 'w1'],
      ['job.heartbeat', 'j1'],
    ]);
    expect(live[1]!.data).toEqual({
      job_id: 'j1',
      job_type: 'email.send',
      queue: 'email',
      state: 'active',
      worker_id: 'w1',
      attempt: 2,
      visible_until: '2026-06-01T10:31:00.000Z',
    });
  });
});
