import type {
  ErrorSummary,
  EventFact,
  HeartbeatNotice,
  JobEntryReason,
  JobFact,
  ProgressFact,
  QueueFact,
  RateLimitFact,
  RecordedFact,
  ScheduleFact,
  WorkerFact,
  WorkflowFact,
} from './event-facts';
import { isCursor } from './event-facts';
import type { JsonObject, JsonValue } from './json';
import { rateLimitKey } from './rate-limit-events';

/**
 * The lifecycle events of ojs-events section 3 that this server emits, and
 * how each derives from a recorded fact. Events carry the envelope of
 * section 2 and the data of section 4, plus `job_id` and `state` on job
 * events (ojs-conformance L0-EVT-002) and `trace_id` when the job has one
 * (ojs-events 8.3).
 */
export const EVENT_TYPES = [
  'job.enqueued',
  'job.scheduled',
  'job.started',
  'job.completed',
  'job.failed',
  'job.retrying',
  'job.discarded',
  'job.cancelled',
  'job.expired',
  'job.progress',
  'job.heartbeat',
  // The timeout events of timeouts.md 11.1.
  'job.timeout',
  'job.stalled',
  'job.ttl_expired',
  'job.total_timeout',
  'worker.started',
  'worker.quiet',
  'worker.stopped',
  /** Not in the catalog: a worker that stopped beating and was removed by the server. */
  'worker.dead',
  'worker.heartbeat',
  'queue.paused',
  'queue.resumed',
  // ojs-cron 9.
  'cron.triggered',
  'cron.skipped',
  // ojs-rate-limiting 11.1, for queue limits (sampled: rate-limit-events.ts).
  'rate_limit.exceeded',
  'rate_limit.released',
  // ojs-events 3.5 and ojs-workflows appendix B.
  'workflow.created',
  'workflow.started',
  'workflow.step_completed',
  'workflow.step_failed',
  'workflow.completed',
  'workflow.failed',
  'workflow.cancelled',
] as const;
export type EventType = (typeof EVENT_TYPES)[number];

/** Emitted live to the watchers that ask for them, never stored: one per beat would swamp the log. */
export const LIVE_ONLY_EVENT_TYPES: readonly EventType[] = ['job.heartbeat', 'worker.heartbeat'];

/** Events an error of these types also stands for (timeouts.md 11.1). */
const TIMEOUT_EVENTS: Readonly<Record<string, EventType>> = {
  timeout: 'job.timeout',
  stalled: 'job.stalled',
  enqueue_ttl_expired: 'job.ttl_expired',
  total_timeout: 'job.total_timeout',
};

/** A lifecycle event: the envelope of ojs-events section 2. */
export interface LifecycleEvent {
  /** "evt_<cursor>.<n>": unique, and where a watcher resumes. */
  id: string;
  type: EventType;
  /** A URI naming what made the change: ojs://<service>/<component>[/<instance>]. */
  source: string;
  /** Epoch milliseconds. */
  time: number;
  /** The job id, worker id or queue name the event is about. */
  subject: string;
  data: JsonObject;
  /** What filters select on (also in `data`). */
  queue?: string;
  jobType?: string;
  jobId?: string;
}

/** The events a fact stands for, in lifecycle order. `service` names this deployment in `source`. */
export function eventsOf(recorded: RecordedFact, service: string): LifecycleEvent[] {
  const drafts = eventDraftsOf(recorded.fact);
  return drafts.map(({ component, ...draft }, n) => ({
    ...draft,
    id: eventId(recorded.cursor, n),
    source: `ojs://${service}/${component}`,
  }));
}

/**
 * The live-only events of a beat or a lease extension: worker.heartbeat for
 * a beat, job.heartbeat for each job whose lease it renewed. Their ids are
 * not resume points (they are never stored).
 */
export function heartbeatEvents(notice: HeartbeatNotice, service: string): LifecycleEvent[] {
  const source = `ojs://${service}/workers/${notice.workerId}`;
  const id = (what: string): string => `hb_${notice.workerId}_${notice.at}_${what}`;
  const events: LifecycleEvent[] = notice.jobs.map((lease) => ({
    id: id(lease.jobId),
    type: 'job.heartbeat',
    source,
    time: notice.at,
    subject: lease.jobId,
    data: {
      job_id: lease.jobId,
      job_type: lease.jobType,
      queue: lease.queue,
      state: 'active',
      worker_id: notice.workerId,
      attempt: lease.attempt,
      visible_until: new Date(lease.visibleUntil).toISOString(),
    },
    queue: lease.queue,
    jobType: lease.jobType,
    jobId: lease.jobId,
  }));
  if (notice.state !== undefined) {
    events.unshift({
      id: id('worker'),
      type: 'worker.heartbeat',
      source,
      time: notice.at,
      subject: notice.workerId,
      data: { worker_id: notice.workerId, state: notice.state, active_jobs: notice.jobs.length },
    });
  }
  return events;
}

/** The id of the `n`th event of the fact at `cursor`. */
export function eventId(cursor: string, n: number): string {
  return `evt_${cursor}.${n}`;
}

/** The cursor and index an event id names, or undefined when it is not one this server made. */
export function parseEventId(id: string): { cursor: string; n: number } | undefined {
  const match = /^evt_(\d{1,16})\.(\d{1,2})$/.exec(id);
  return match === null || !isCursor(match[1]!) ? undefined : { cursor: match[1]!, n: Number(match[2]) };
}

/** An event before it has an id and a source: `component` completes the source. */
export type EventDraft = Omit<LifecycleEvent, 'id' | 'source'> & { component: string };

/**
 * The events a fact stands for, in lifecycle order, without the id and
 * source a logged event gets: what telemetry puts on the span of a
 * transition it records, where there is no log cursor.
 */
export function eventDraftsOf(fact: EventFact): EventDraft[] {
  switch (fact.kind) {
    case 'job':
      return jobDrafts(fact);
    case 'progress':
      return [progressDraft(fact)];
    case 'worker':
      return workerDrafts(fact);
    case 'queue':
      return [queueDraft(fact)];
    case 'schedule':
      return [scheduleDraft(fact)];
    case 'rate_limit':
      return [rateLimitDraft(fact)];
    case 'workflow':
      return [workflowDraft(fact)];
  }
}

function jobDrafts(fact: JobFact): EventDraft[] {
  const base = jobData(fact);
  const job = (type: EventType, data: JsonObject = {}): EventDraft => ({
    type,
    time: fact.at,
    subject: fact.jobId,
    data: { ...base, ...data },
    queue: fact.queue,
    jobType: fact.jobType,
    jobId: fact.jobId,
    component: componentOf(fact),
  });
  const entered = entryDraft(fact, job);
  const drafts = entered === undefined ? [] : [entered];
  if (fact.from === 'active' && fact.error !== undefined && fact.to !== 'cancelled') drafts.push(...failureDrafts(fact, job));
  else if (fact.to === 'discarded' && fact.from !== 'active') drafts.push(...expiryDrafts(fact, job));
  return drafts;
}

/** The event of the state the job entered; failures and expiries add theirs (or stand alone). */
function entryDraft(fact: JobFact, job: (type: EventType, data?: JsonObject) => EventDraft): EventDraft | undefined {
  switch (fact.to) {
    case 'available':
      // A failed attempt requeued at once is told by job.failed and job.retrying.
      if (fact.from === 'active' && fact.reason !== 'undelivered') return undefined;
      return job('job.enqueued', compact({ priority: fact.priority, reason: fact.reason ?? ENTRY_REASONS[fact.from] }));
    case 'pending':
      return job('job.enqueued', compact({ priority: fact.priority }));
    case 'scheduled':
      return job('job.scheduled', compact({ scheduled_at: iso(fact.scheduledAt) }));
    case 'active':
      return job('job.started', compact({ worker_id: fact.workerId, attempt: fact.attempt }));
    case 'completed':
      return job('job.completed', compact({ worker_id: fact.workerId, attempt: fact.attempt, duration_ms: durationOf(fact) }));
    case 'cancelled':
      return job('job.cancelled', compact({ cancelled_by: fact.actor, reason: fact.reason }));
    case 'retryable':
    case 'discarded':
      return undefined;
  }
}

/** Why a job entered available, by the state it came from (ojs-events job.enqueued has no such field; it is ours). */
const ENTRY_REASONS: Readonly<Partial<Record<JobFact['from'], JobEntryReason>>> = {
  pending: 'activated',
  scheduled: 'due',
  retryable: 'retry',
  discarded: 'manual_retry',
};

/** A failed attempt: job.failed, then where it goes (job.retrying or job.discarded), then the timeout it was. */
function failureDrafts(fact: JobFact, job: (type: EventType, data?: JsonObject) => EventDraft): EventDraft[] {
  const error = errorData(fact.error!);
  const isRetried = fact.to === 'retryable' || fact.to === 'available';
  const drafts = [
    job(
      'job.failed',
      compact({
        worker_id: fact.workerId,
        attempt: fact.attempt,
        error: { ...error, retryable: isRetried },
        duration_ms: durationOf(fact),
      }),
    ),
  ];
  if (isRetried) {
    drafts.push(
      job(
        'job.retrying',
        compact({ attempt: fact.attempt, max_attempts: fact.maxAttempts, next_retry_at: iso(fact.nextRetryAt ?? fact.at), error }),
      ),
    );
  } else {
    drafts.push(job('job.discarded', compact({ total_attempts: fact.attempt, last_error: error, dead_letter: fact.deadLetter === true })));
  }
  const timeout = timeoutDraft(fact, job);
  if (timeout !== undefined) drafts.push(timeout);
  return drafts;
}

/** A waiting job discarded because a deadline passed (expires_at, enqueue TTL, total timeout). */
function expiryDrafts(fact: JobFact, job: (type: EventType, data?: JsonObject) => EventDraft): EventDraft[] {
  const limit = fact.error?.details?.['limit_seconds'];
  const drafts = [
    job(
      'job.expired',
      compact({
        created_at: iso(fact.createdAt),
        expired_at: iso(fact.at),
        ttl_ms: typeof limit === 'number' ? limit * 1000 : undefined,
        error: fact.error === undefined ? undefined : errorData(fact.error),
      }),
    ),
  ];
  const timeout = timeoutDraft(fact, job);
  if (timeout !== undefined) drafts.push(timeout);
  return drafts;
}

function timeoutDraft(fact: JobFact, job: (type: EventType, data?: JsonObject) => EventDraft): EventDraft | undefined {
  const type = fact.error === undefined ? undefined : TIMEOUT_EVENTS[fact.error.type];
  if (type === undefined) return undefined;
  return job(type, compact({ worker_id: fact.workerId, attempt: fact.attempt, ...fact.error!.details }));
}

function progressDraft(fact: ProgressFact): EventDraft {
  const data = compact({
    job_id: fact.jobId,
    job_type: fact.jobType,
    queue: fact.queue,
    state: 'active',
    worker_id: fact.workerId,
    attempt: fact.attempt,
    progress_percent: fact.progress === undefined ? undefined : fact.progress * 100,
    trace_id: traceIdOf(fact.traceparent),
  });
  return {
    type: 'job.progress',
    time: fact.at,
    subject: fact.jobId,
    data,
    queue: fact.queue,
    jobType: fact.jobType,
    jobId: fact.jobId,
    component: `workers/${fact.workerId}`,
  };
}

function workerDrafts(fact: WorkerFact): EventDraft[] {
  const worker = (type: EventType, data: JsonObject): EventDraft => ({
    type,
    time: fact.at,
    subject: fact.workerId,
    data: { worker_id: fact.workerId, ...data },
    component: `workers/${fact.workerId}`,
  });
  if (fact.from === 'none') return [worker('worker.started', compact({ queues: fact.queues, concurrency: fact.concurrency }))];
  if (fact.to === 'quiet') return [worker('worker.quiet', { active_jobs: fact.activeJobs ?? 0 })];
  if (fact.to !== 'removed') return [];
  const uptime = fact.registeredAt === undefined ? undefined : fact.at - fact.registeredAt;
  if (fact.reason === 'dead') {
    return [worker('worker.dead', compact({ active_jobs: fact.activeJobs, last_beat_at: iso(fact.lastBeatAt), uptime_ms: uptime }))];
  }
  return [worker('worker.stopped', compact({ reason: 'shutdown', uptime_ms: uptime }))];
}

function queueDraft(fact: QueueFact): EventDraft {
  const type: EventType = fact.paused ? 'queue.paused' : 'queue.resumed';
  const data = compact({ queue: fact.queue, [fact.paused ? 'paused_by' : 'resumed_by']: fact.actor });
  return { type, time: fact.at, subject: fact.queue, data, queue: fact.queue, component: 'api' };
}

/**
 * cron.triggered or cron.skipped (ojs-cron 9): the schedule's name is the
 * subject; actual_time is when the tick was fired, scheduled_time the tick.
 * A skip for an overlap names the unfinished job (active_job_id); one for
 * missed ticks counts them.
 */
function scheduleDraft(fact: ScheduleFact): EventDraft {
  const base = { cron_name: fact.name, cron_expression: fact.expression, timezone: fact.timezone, scheduled_time: iso(fact.tick) };
  const draft = (type: EventType, data: JsonObject): EventDraft => {
    const made: EventDraft = { type, time: fact.at, subject: fact.name, data: compact({ ...base, ...data }), component: 'scheduler' };
    // The job's queue, type and id, so that watchers filtering on them see the schedule's events too.
    if (fact.queue !== undefined) made.queue = fact.queue;
    if (fact.jobType !== undefined) made.jobType = fact.jobType;
    if (fact.jobId !== undefined) made.jobId = fact.jobId;
    return made;
  };
  if (fact.reason === undefined) {
    return draft(
      'cron.triggered',
      compact({ job_id: fact.jobId, job_type: fact.jobType, run_count: fact.runCount, actual_time: iso(fact.at) }),
    );
  }
  return draft(
    'cron.skipped',
    compact({
      reason: fact.reason,
      active_job_id: fact.reason === 'overlap_skip' ? fact.jobId : undefined,
      missed_count: fact.missedCount,
      last_missed_time: iso(fact.lastMissed),
      missed_count_is_at_least: fact.isCountAtLeast,
    }),
  );
}

/**
 * rate_limit.exceeded or rate_limit.released (ojs-rate-limiting 11.1): the
 * limits' key is the subject. A release the claim of a job made names the
 * job (and comes from the scheduler, as the exceeded does); one that
 * clearing the limits made names none and comes from the API.
 */
function rateLimitDraft(fact: RateLimitFact): EventDraft {
  const key = rateLimitKey(fact.queue);
  const type: EventType = fact.change === 'exceeded' ? 'rate_limit.exceeded' : 'rate_limit.released';
  const data = compact({ key, strategy: fact.strategy, limit: fact.limit, current: fact.current, job_id: fact.jobId });
  const component = fact.change === 'released' && fact.jobId === undefined ? 'api' : 'scheduler';
  const draft: EventDraft = { type, time: fact.at, subject: key, data, queue: fact.queue, component };
  if (fact.jobId !== undefined) draft.jobId = fact.jobId;
  return draft;
}

/**
 * A workflow event (ojs-events 3.5): the workflow is the subject; a step's
 * event names its job too, so that watchers of that job see it.
 */
function workflowDraft(fact: WorkflowFact): EventDraft {
  const data = compact({
    workflow_id: fact.workflowId,
    workflow_name: fact.name,
    workflow_type: fact.workflowType,
    total_steps: fact.jobCount,
    step_id: fact.step,
    step_type: fact.stepType,
    job_id: fact.jobId,
    duration_ms: fact.durationMs,
    steps_remaining: fact.stepsRemaining,
    failed_step_id: fact.failedStep,
    failed_step_type: fact.failedStepType,
    failed_job_id: fact.failedJobId,
    trace_id: traceIdOf(fact.traceparent),
  });
  const component = fact.change === 'created' || fact.change === 'cancelled' ? 'api' : 'scheduler';
  const draft: EventDraft = { type: `workflow.${fact.change}`, time: fact.at, subject: fact.workflowId, data, component };
  if (fact.jobId !== undefined) draft.jobId = fact.jobId;
  if (fact.stepType !== undefined) draft.jobType = fact.stepType;
  return draft;
}

/** What every job event's data carries. */
function jobData(fact: JobFact): JsonObject {
  return compact({
    job_id: fact.jobId,
    job_type: fact.jobType,
    queue: fact.queue,
    state: fact.to,
    trace_id: traceIdOf(fact.traceparent),
  });
}

/**
 * The component the change came from: a worker's own doing (starting,
 * finishing, failing an attempt) shows as the worker; a change someone asked
 * for (enqueue, cancel, activate, retry; only someone cancels a job) as the API; what the server decided
 * on its own (promotions, expiries, reclaims) as the scheduler.
 */
function componentOf(fact: JobFact): string {
  const isWorkers =
    fact.to === 'active' ||
    fact.to === 'completed' ||
    (fact.from === 'active' && fact.error !== undefined && !SERVER_ERRORS.has(fact.error.type));
  if (isWorkers && fact.workerId !== undefined) return `workers/${fact.workerId}`;
  const isRequested =
    fact.actor !== undefined || fact.to === 'cancelled' || fact.from === 'none' || fact.from === 'pending' || fact.from === 'discarded';
  return isRequested ? 'api' : 'scheduler';
}

/** Errors the server records when it takes a job back (timeouts.md, worker-protocol 10). */
const SERVER_ERRORS: ReadonlySet<string> = new Set([
  'timeout',
  'stalled',
  'total_timeout',
  'enqueue_ttl_expired',
  'visibility_timeout',
  'worker_death',
]);

function errorData(error: ErrorSummary): JsonObject {
  return compact({ code: error.type, message: error.message, handler_code: error.code });
}

function durationOf(fact: JobFact): number | undefined {
  return fact.startedAt === undefined ? undefined : Math.max(0, fact.at - fact.startedAt);
}

/** The trace id of a W3C traceparent ("00-<trace id>-<span id>-<flags>"). */
function traceIdOf(traceparent: string | undefined): string | undefined {
  const match = traceparent === undefined ? null : /^[0-9a-f]{2}-([0-9a-f]{32})-[0-9a-f]{16}-[0-9a-f]{2}$/.exec(traceparent);
  return match === null ? undefined : match[1];
}

function iso(ms: number | undefined): string | undefined {
  return ms === undefined ? undefined : new Date(ms).toISOString();
}

/** `fields` without the absent ones. */
function compact(fields: Record<string, JsonValue | undefined>): JsonObject {
  const data: JsonObject = {};
  for (const [key, value] of Object.entries(fields)) if (value !== undefined) data[key] = value;
  return data;
}
