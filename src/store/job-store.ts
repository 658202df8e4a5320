import type { FailureOutcome } from '../domain/failure';
import type { Job, JobError, JobState } from '../domain/job';
import type { JobTransition } from '../domain/transition';
import type { OjsError } from '../domain/errors';
import type { HeartbeatNotice, RecordedFact } from '../domain/event-facts';
import type { JobQuery } from '../domain/job-query';
import type { JsonObject, JsonValue } from '../domain/json';
import type { Page, PageRequest } from '../domain/paging';
import type { QueueLimits } from '../domain/queue-limits';
import type { RetentionPolicy } from '../domain/retention';
import type { Schedule, ScheduleSpec } from '../domain/schedule';
import type { MissedTicks } from '../domain/schedule-tick';
import type { Worker, WorkerState } from '../domain/worker';
import type { NewWorkflow } from '../domain/workflow-creation';
import type { WorkflowPlan } from '../domain/workflow-plan';
import type { WorkflowRun } from '../domain/workflow-run';
import type { StepJob } from '../domain/workflow-view';
import type { PublishedSignal, StoreSignal } from './store-signal';

/**
 * JobStore is the storage port. Every method that changes several things
 * (a job and a worker's reservations, a batch of jobs, a worker and the jobs
 * it held) is one atomic call, so that a store shared by several server
 * replicas never exposes a half-applied change.
 *
 * Decisions belong to the domain: callers read, decide (retry or discard,
 * backoff, desired state), and hand the decision to a method that re-checks
 * its precondition (usually the lease token of the attempt the decision was
 * made for) and applies it. Time always comes in as `now`.
 *
 * Refusals are OjsErrors: not_found, duplicate, invalid_state; a store that
 * cannot reach its backend throws an `unavailable` OjsError.
 */
/** What enqueue did with one job of a batch, in request order. */
export interface EnqueueOutcome {
  /** The stored job, or the existing one returned in its place (`deduplicated`). */
  job: Job;
  deduplicated: boolean;
  /** The cancellation of the job this one replaced (unique policy replace). */
  replaced?: JobTransition;
}

export interface JobStore extends ScheduleStore, WorkflowStore {
  /**
   * Stores new jobs, all or none. Fails with `duplicate` if an id is taken.
   * A job with a unique policy (domain unique-policy.ts) is checked against
   * the holder of its key in the same atomic step, earlier jobs of the batch
   * included: a duplicate under reject fails the whole batch
   * (uniqueConflict); under ignore the existing job takes the item's place
   * (nothing stored for it); under replace the existing job is cancelled
   * (if it has not finished) and the new one takes the key. A key is held
   * while its job is in its policy's states, until created_at plus period.
   */
  enqueue(jobs: readonly Job[]): Promise<EnqueueOutcome[]>;
  getJob(jobId: string): Promise<Job | undefined>;
  /** Jobs by id, in order; undefined for unknown ids. */
  getJobs(jobIds: readonly string[]): Promise<(Job | undefined)[]>;

  /**
   * Moves up to `max` available jobs of `queues` (in queue order, then
   * priority, then FIFO) to active and reserves them for the worker, never
   * beyond its free capacity and only while its desired state is running.
   * Jobs past their expires_at are never claimed; promoteDue discards them.
   * A queue's limits (setQueueLimits) hold for all claims of every replica
   * together: a job they hold back stays available and first in line. The
   * claim records the queue's rate-limit facts, sampled in the same atomic
   * step (domain rate-limit-events.ts).
   */
  claim(params: ClaimParams): Promise<ClaimResult>;
  /**
   * Undoes the claim of jobs that never reached their worker: back to
   * available, attempt restored, nothing recorded against the job.
   */
  releaseUndelivered(params: ReleaseParams): Promise<JobTransition[]>;
  /** Completes active jobs whose lease the worker holds. */
  ack(params: AckParams): Promise<SettlementOutcome[]>;
  /** Applies decided failure outcomes to jobs whose lease the worker holds. */
  fail(params: FailParams): Promise<SettlementOutcome[]>;
  /** Renews the lease of a held job (it counts as a beat for it); returns the new expiry. */
  extendLease(params: ExtendLeaseParams): Promise<number>;
  /**
   * Records progress (clamped to 0..1, never decreasing within an attempt)
   * and a checkpoint for a held job, renewing its lease. A job the worker no
   * longer holds is left alone (`applied: false`), as ojs-progress asks.
   */
  recordProgress(params: ProgressParams): Promise<{ applied: boolean; leaseExpiresAt?: number }>;

  /** Cancels a job that has not finished; idempotent on cancelled jobs. */
  cancel(jobId: string, now: number): Promise<StateChange>;
  /** pending -> available. */
  activate(jobId: string, now: number): Promise<StateChange>;
  /** discarded -> available, with attempt and errors reset (ojs-core 6.3). */
  retry(jobId: string, now: number): Promise<StateChange>;

  /**
   * scheduled/retryable jobs whose time has come -> available. Says when
   * the earliest job left waiting for its time falls due, so that the
   * next pass runs then; a job that comes to wait for an earlier time is
   * announced by a `dueAt` signal.
   */
  promoteDue(now: number, limit: number): Promise<PromotionPass>;
  /** Waiting jobs past their waiting deadline (expires_at, enqueue TTL, total timeout). */
  findExpiredWaiting(now: number, limit: number): Promise<Job[]>;
  /** Discards waiting jobs as decided, each only if still in the state it was found in. */
  discardWaiting(params: DiscardWaitingParams): Promise<JobTransition[]>;
  /**
   * Takes (once, whichever replica asks) the active jobs whose execution
   * timeout passed at or before `now`: their workers are to be told to stop.
   */
  takeDueSoftTimeouts(now: number, limit: number): Promise<{ jobId: string; workerId: string }[]>;
  /** Active jobs whose lease expired at or before `now`. */
  findExpiredLeases(now: number, limit: number): Promise<Job[]>;
  /**
   * Applies decided outcomes to active jobs, each only if it still holds the
   * given lease (and, for expiries, if that lease is still expired at `now`).
   */
  recover(params: RecoverParams): Promise<JobTransition[]>;

  /** When active jobs last showed signs of life (lease renewal), at most `limit` of them: for the heartbeat-age gauge. */
  listActiveHeartbeats(limit: number): Promise<{ queue: string; renewedAt: number }[]>;

  /**
   * Removes terminal jobs past their retention, oldest first; returns how
   * many. Ended workflows go with the retention of their end (completed:
   * completedMs, failed: discardedMs, cancelled: cancelledMs), in the same
   * pass, uncounted; their jobs follow their own retention.
   */
  pruneTerminal(now: number, retention: RetentionPolicy, limit: number): Promise<number>;

  registerWorker(worker: Worker): Promise<void>;
  getWorker(workerId: string): Promise<WorkerSnapshot | undefined>;
  /**
   * Workers in id order, one page at a time. With a filter, at most
   * `scanBudget` workers are examined per call, so a page may hold fewer
   * than `limit` matches and still have a next one.
   */
  listWorkers(request: WorkerPageRequest): Promise<Page<WorkerSnapshot>>;
  /**
   * Records up to MAX_BEATS_PER_CALL beats in one call, in order (a
   * worker's second beat sees its first). Each records liveness, the
   * reported state as the domain decided it, and lease renewals for the
   * listed jobs the worker holds; nothing but the answer is applied if the
   * beat is late (`stale`) or if the worker's state changed since it was
   * read (`conflict`: read again and decide again). A beat of an
   * unregistered worker is `not_found` and the others still apply. One call
   * instead of one per beat: a replica with thousands of workers pays a
   * store round trip per batch.
   */
  recordBeats(params: readonly BeatParams[]): Promise<RecordedBeat[]>;
  /** Applies an operator directive the domain decided, if the worker did not change meanwhile. */
  directWorker(params: DirectParams): Promise<'applied' | 'conflict'>;
  /** Workers whose last beat is older than `cutoff`, with the jobs they hold. */
  findSilentWorkers(cutoff: number, limit: number): Promise<WorkerSnapshot[]>;
  /**
   * Removes a worker and applies outcomes to every job it holds, atomically.
   * Refused (`removed: false`) when the worker beat after `ifLastBeatAt`, or
   * holds a job that `recoveries` does not cover; the caller reads again.
   */
  removeWorker(params: RemoveWorkerParams): Promise<RemoveWorkerOutcome>;

  /**
   * Job counts per state of the queues that hold jobs or are paused, in name
   * order, one page at a time. A queue whose last job is removed stops being
   * listed (and stops costing anything) unless it is paused.
   */
  listQueues(request: PageRequest): Promise<Page<QueueCounts>>;
  /** One queue's counts, pause and throughput over the last hour, read at `now`. */
  queueStats(queue: string, now: number): Promise<QueueStats>;
  /**
   * Pauses or resumes a queue for every replica: a paused queue takes
   * enqueues and delivers nothing. Records queue.paused or queue.resumed,
   * and on resume signals that its jobs are available. `changed` is false
   * when the queue already was as asked.
   */
  setQueuePaused(params: PauseParams): Promise<{ changed: boolean }>;
  /**
   * Sets (or, with no limits, clears) a queue's fleet-wide limits, which
   * claims on every replica obey from then on (domain queue-limits.ts); the
   * queue's log of recent starts is kept while it has a rate, so a lowered
   * rate counts the starts already made. Signals jobsAvailable with the
   * queue's available count, so waiting Fetch streams claim under the new
   * limits at once. Clearing them drops the queue's rate-limit event
   * sampling, recording the released fact of an open episode.
   */
  setQueueLimits(params: QueueLimitsParams): Promise<void>;

  /**
   * One page of jobs matching a query, in listing order (domain job-query.ts:
   * available jobs in run order, queue by queue; the others by their listing
   * time), within the query's byte budget; the work is proportional to the
   * page (the scan budget bounds what the indexes cannot answer). Available
   * jobs are read from the queues' run order itself: an available job that
   * a claim passed over for being past its waiting deadline has left it and
   * is not listed (the expiry pass discards it).
   */
  listJobs(query: JobQuery): Promise<Page<Job>>;
  /** The ids a listing would return, without reading the jobs: for bulk operations. */
  findJobIds(query: JobQuery): Promise<Page<string>>;
  /**
   * Cancels each job that has not finished (cancelled ones count as done);
   * an active job's worker is told. One outcome per id, in order.
   */
  cancelJobs(params: BulkChangeParams): Promise<BulkOutcome[]>;
  /**
   * Makes each discarded job available again with its attempts and errors
   * reset (ojs-core 6.3), and each retryable one available now; others are
   * refused per item.
   */
  retryJobs(params: BulkChangeParams): Promise<BulkOutcome[]>;
  /** Deletes each finished job and every trace of it in every index; others are refused per item. */
  deleteJobs(params: BulkChangeParams): Promise<BulkOutcome[]>;

  /**
   * The event log: facts the store recorded with the changes they describe
   * (domain event-facts.ts), oldest first, after `after`. `oldest` is the
   * cursor of the oldest fact still retained: a reader whose cursor is older
   * missed facts that retention removed.
   */
  readFacts(request: { after?: string; limit: number }): Promise<FactPage>;
  /**
   * Calls `listener` with every fact recorded after `after` (or, when
   * absent, after the last one recorded when the returned promise
   * resolves), in log order, each once, until the function it resolves
   * with is called. Resolves once the follower's starting point is fixed:
   * a change made after that is never missed. Facts older than the log's
   * oldest are gone: the caller checks with readFacts first.
   */
  followFacts(after: string | undefined, listener: (facts: RecordedFact[]) => void): Promise<() => void>;
  /** Removes facts older than the event retention's age (count is bounded when facts are recorded); returns how many. */
  pruneFacts(now: number): Promise<number>;
  /**
   * Calls `listener` with every beat and lease extension on any replica
   * from when the returned promise resolves, until the function it resolves
   * with is called (live-only heartbeat events; a store may carry them only
   * while someone listens, and resolves once it does).
   */
  followHeartbeats(listener: (notice: HeartbeatNotice) => void): Promise<() => void>;

  /**
   * Every broken invariant of the stored data (job state against its index
   * entries, counters against real counts, workers' reservations against
   * leases, orphans), as readable sentences; empty when consistent. A
   * diagnostic that reads everything: for tests and operators, never for
   * the hot path.
   */
  audit(): Promise<string[]>;

  /** Notifies `listener` of changes that waiting streams care about. */
  subscribe(listener: (signal: StoreSignal) => void): () => void;
  /** Sends a signal the application originates (an event, a timeout notice) to every replica. */
  publish(signal: PublishedSignal): Promise<void>;
  close(): Promise<void>;
}

export interface StateChange {
  job: Job;
  from: JobState;
  /** The worker that held the job before the change, if it was active. */
  workerId?: string;
}

export interface ClaimParams {
  workerId: string;
  queues: readonly string[];
  max: number;
  /** The claim's time, or the newest start logged for its rate-limited queues if later (domain claimTime). */
  now: number;
  /** Unique per call; lease tokens are derived from it. */
  leaseNonce: string;
  /** How long a new lease waits for the worker to confirm it (see domain claimLease). */
  confirmWithinMs: number;
  /**
   * Claim a job only while the claimed jobs' stored size (roughly their JSON
   * bytes) stays within this; a first job is claimed whatever its size, and
   * the first that does not fit stays first in line. Keeps one claim's reply
   * bounded whatever the jobs weigh.
   */
  maxBytes: number;
}

/** What a promoteDue pass did, and when the next one is due. */
export interface PromotionPass {
  transitions: JobTransition[];
  /**
   * When the earliest scheduled or retryable job left falls due (already,
   * when the pass stopped at its limit); undefined when none waits. It may
   * be a little early, never late: a store may count a job that has just
   * left its waiting state.
   */
  nextDueAt: number | undefined;
}

export interface ClaimResult {
  /** False when the worker's desired state is no longer running. */
  isRunning: boolean;
  /** The claimed jobs, now active, each with its lease. */
  jobs: Job[];
  /** Capacity left after this claim. */
  freeCapacity: number;
  /** The claim stopped at its byte budget with a job left that would not fit: claim again for more. */
  isBudgetSpent: boolean;
  /**
   * The queues whose jobs waited while their rate window was full, with
   * when its next slot opens: a claim then may take more. Nothing signals
   * that moment; whoever waits schedules its own wake-up.
   */
  heldBackByRate: { queue: string; opensAt: number }[];
  /**
   * Queues this claim found with no job ready (never a paused one; a store
   * may leave out a queue it emptied exactly at the claim's limit). Any job
   * made ready there later comes with a jobsAvailable signal, so until one
   * arrives another claim would find nothing there.
   */
  drainedQueues: string[];
}

export interface ReleaseParams {
  leases: readonly { jobId: string; leaseToken: string }[];
  now: number;
  /**
   * Release only leases that lapsed unconfirmed while their worker kept
   * beating (it beat after the claim without listing the job).
   */
  requireUnconfirmedLapse: boolean;
}

export interface AckParams {
  workerId: string;
  items: readonly { jobId: string; leaseToken: string; result?: JsonValue }[];
  now: number;
}

export interface FailParams {
  workerId: string;
  items: readonly { jobId: string; leaseToken: string; outcome: FailureOutcome }[];
  now: number;
}

/**
 * The result of one settlement: the state the job entered and the
 * transition it made, or why it was refused. Only telemetry reads the
 * transition, so a store may build it when it is first read (Redis decodes
 * it from the script's reply then): answers read `state`.
 */
export type SettlementOutcome =
  { ok: true; state: JobState; transition: JobTransition; nextRetryAt?: number } | { ok: false; error: Error };

export interface ProgressParams {
  workerId: string;
  jobId: string;
  leaseToken: string;
  progress?: number;
  data?: JsonObject;
  checkpoint?: JsonValue;
  now: number;
}

export interface DiscardWaitingParams {
  items: readonly { jobId: string; expectedState: JobState; error: JobError; errors: JobError[] }[];
  now: number;
}

export interface ExtendLeaseParams {
  workerId: string;
  jobId: string;
  leaseToken: string;
  now: number;
}

export interface RecoverParams {
  items: readonly {
    jobId: string;
    leaseToken: string;
    outcome: FailureOutcome;
    /** Recover only if the lease is still expired at `now` (not renewed meanwhile). */
    requireExpired: boolean;
  }[];
  now: number;
}

/** A worker with the ids of the jobs the server has reserved for it. */
export interface WorkerSnapshot {
  worker: Worker;
  heldJobIds: string[];
}

/** The part of a worker that beats and directives change. */
export type WorkerStateFields = Pick<Worker, 'state' | 'directive'>;

export interface BeatParams {
  workerId: string;
  sequence: number;
  activeJobIds: readonly string[];
  now: number;
  /** The state fields the decision was made from. */
  expected: WorkerStateFields;
  /** The state fields the domain decided. */
  next: WorkerStateFields;
}

export interface BeatOutcome {
  result: 'applied' | 'stale' | 'conflict';
  /** The state the worker is directed to (as stored, whatever the result). */
  desiredState: WorkerState;
  /** Listed jobs that have been cancelled (when applied). */
  cancelledJobIds: string[];
  /** Listed jobs it holds whose soft timeout passed (domain softTimeoutAt), when applied. */
  timedOutJobIds: string[];
  /** Listed jobs it no longer holds that were neither completed nor cancelled (taken back), when applied. */
  reclaimedJobIds: string[];
}

/** Most beats one recordBeats call takes: a batch script stays short, so it holds Redis briefly. */
export const MAX_BEATS_PER_CALL = 500;

/** A beat of recordBeats: its outcome, or `not_found` when its worker is not registered. */
export type RecordedBeat = BeatOutcome | { result: 'not_found' };

export type WorkerTarget = { workerId: string } | { label: string } | { queue: string };

export interface DirectParams {
  workerId: string;
  expected: WorkerStateFields;
  next: WorkerStateFields;
}

export interface RemoveWorkerParams {
  workerId: string;
  /** Why it goes: declared dead (silent too long), or deregistered (it said goodbye). Recorded in its fact. */
  reason: 'dead' | 'deregistered';
  /** Remove only if the worker has not beaten since (dead-worker detection). */
  ifLastBeatAt?: number;
  recoveries: readonly { jobId: string; leaseToken: string; outcome: FailureOutcome }[];
  now: number;
}

export interface RemoveWorkerOutcome {
  removed: boolean;
  transitions: JobTransition[];
}

export type QueueCounts = {
  queue: string;
  paused: boolean;
  /**
   * The enqueued_at of the job that runs next (the first of the queue's run
   * order): its lag is how long the job that runs next has waited.
   */
  oldestAvailableAt?: number;
  /** The queue's fleet-wide limits, when it has any. */
  limits?: QueueLimits;
} & Record<JobState, number>;

/** One minute of a queue's throughput. */
export interface MinuteCounts {
  /** The minute's start, epoch milliseconds. */
  minute: number;
  completed: number;
  /** Failed attempts (retried or not). */
  failed: number;
  discarded: number;
}

export interface QueueStats {
  counts: QueueCounts;
  /** The last 60 minutes up to the one holding `now`, oldest first; minutes without activity count zero. */
  minutes: MinuteCounts[];
}

export interface PauseParams {
  queue: string;
  paused: boolean;
  now: number;
  actor?: string;
}

export interface QueueLimitsParams {
  queue: string;
  /** Undefined (or no field set) clears the queue's limits. */
  limits?: QueueLimits;
  now: number;
}

export interface BulkChangeParams {
  jobIds: readonly string[];
  now: number;
  /** Who asked, for the events (cancelled_by). */
  actor?: string;
  /** Why, for job.cancelled. */
  reason?: string;
}

/**
 * What a bulk change did to one job: the transition it made (none for a
 * delete, or for a cancel of a job already cancelled), or why it was refused.
 */
export type BulkOutcome = { ok: true; transition?: JobTransition } | { ok: false; error: OjsError };

export interface FactPage {
  facts: RecordedFact[];
  oldest?: string;
}

export type { Page, PageRequest };

export interface WorkerPageRequest extends PageRequest {
  filter?: WorkerFilter;
  /** With a filter: most workers examined by one call. */
  scanBudget: number;
}

export interface WorkerFilter {
  label?: string;
  queue?: string;
}

/**
 * The storage of cron schedules (domain schedule.ts). Ticks are claimed
 * atomically: every replica may plan the ticks of a due schedule (domain
 * planTicks), and fireTicks applies only the first plan made from the
 * schedule as it still is, so each tick enqueues at most one job fleet-wide.
 */
export interface ScheduleStore {
  /**
   * Stores a schedule, or replaces the one of that name (upsert, ojs-cron
   * 8.1), keeping its run history and bumping its revision, so that ticks
   * planned from the version before are refused. `nextRunAt` is dropped for
   * a paused schedule (ojs-cron 8.5). A new one is refused when
   * `maxSchedules` are registered (queue_full).
   */
  registerSchedule(params: RegisterScheduleParams): Promise<{ schedule: Schedule; created: boolean }>;
  /** Removes a schedule (not_found if there is none); the jobs it made stay. */
  removeSchedule(name: string): Promise<void>;
  getSchedule(name: string): Promise<Schedule | undefined>;
  /** Schedules in name order, one page at a time. */
  listSchedules(request: PageRequest): Promise<Page<Schedule>>;
  /**
   * Pauses (next_run_at cleared) or resumes (next_run_at set as given) a
   * schedule; not_found if there is none. `changed` is false when it
   * already was as asked.
   */
  setSchedulePaused(params: SchedulePauseParams): Promise<{ schedule: Schedule; changed: boolean }>;
  /**
   * Schedules whose next_run_at is at or before `now`, earliest first, at
   * most `limit`, and when the next pass is due: `now` when the limit left
   * some out, else the earliest next_run_at after `now` (undefined: none).
   * A schedule whose next_run_at becomes the earliest of all is announced
   * by a `scheduleDueAt` signal.
   */
  findDueSchedules(now: number, limit: number): Promise<DueSchedules>;
  /**
   * Applies a tick plan if the schedule is still at `revision` with
   * `expectedNextRunAt`, else changes nothing (`fired: false`: another
   * replica fired it, or an operator changed the schedule). Applied, it
   * enqueues the tick's job, if any, as enqueue does (its unique policy is
   * the overlap policy: a job returned in its place means the tick was
   * skipped), and moves next_run_at on; a job stored counts as a run
   * (last_run_at, run_count). Records the facts (ScheduleFact): missed
   * ticks skipped, then the tick triggered or skipped for an overlap (or
   * for an invalid template). One atomic step.
   */
  fireTicks(params: FireTicksParams): Promise<FireTicksOutcome>;
}

/** What findDueSchedules found. */
export interface DueSchedules {
  schedules: Schedule[];
  nextDueAt: number | undefined;
}

export interface RegisterScheduleParams {
  spec: ScheduleSpec;
  /** The schedule's anchor (Schedule.anchoredAt, domain scheduleAnchor); `now` by default. */
  anchoredAt?: number;
  /** The first tick after `now`; undefined when the expression has none. */
  nextRunAt?: number;
  now: number;
  /** A new schedule is refused (domain tooManySchedules) when this many are registered; default MAX_SCHEDULES. */
  maxSchedules?: number;
}

export interface SchedulePauseParams {
  name: string;
  paused: boolean;
  /** When resuming: the first tick after `now`. */
  nextRunAt?: number;
  now: number;
}

export interface FireTicksParams {
  name: string;
  revision: number;
  expectedNextRunAt: number;
  /** The tick that fires and its job (domain tickSubmission, tickJobId), when one does. */
  tick?: { at: number; job: Job };
  /** Ticks the plan passes over, recorded as skipped. */
  missed?: MissedTicks;
  /** The tick that was due to fire but makes no job: the template no longer makes a valid one (recorded as skipped). */
  invalidTick?: number;
  /** The schedule's next tick; undefined when there is none ever. */
  nextRunAt?: number;
  now: number;
}

export type FireTicksOutcome = { fired: false } | { fired: true; schedule: Schedule; enqueued?: EnqueueOutcome };

/**
 * Workflows (domain workflow-*.ts). A store advances a workflow itself, in
 * the same atomic step as the job change that causes it, whichever
 * operation makes it (ack, fail, recovery, a worker's removal, cancel,
 * expiry): a workflow job that completes, or is discarded or cancelled,
 * settles its node (domain settleNode: `succeeded`, or `failed`); the jobs
 * of the nodes that this decides become available (reason `workflow`,
 * with their parent_results: domain assembleParentResults, inlined up to
 * PARENT_RESULTS_INLINE_BYTES) or are cancelled; the first of its jobs to
 * start makes a pending workflow running (domain startWorkflow). Each
 * advance records its facts (domain workflowFacts). A job's result is
 * copied to its workflow when its node succeeds, so parent_results and
 * GetWorkflow do not depend on the job's own retention.
 *
 * A pending workflow job waits for its workflow: ActivateJob refuses it
 * (invalid_state).
 */
export interface WorkflowStore {
  /**
   * Stores a workflow (its plan, run and jobs: available for the nodes
   * enqueued at creation, pending for the others), all or none, and
   * records workflow.created and its jobs' enqueueing. `duplicate` when
   * the workflow's id or one of its jobs' ids is taken.
   */
  createWorkflow(workflow: NewWorkflow): Promise<void>;
  /** A workflow as it stands; undefined when there is none (or retention removed it). */
  getWorkflow(workflowId: string): Promise<WorkflowRecord | undefined>;
  /**
   * Cancels a workflow (domain cancelWorkflow) and every job of it that
   * has not settled, active ones included (their workers are told,
   * jobsCancelled). not_found when there is none; invalid_state when it
   * has ended. Returns the workflow as it then stands and its jobs' transitions.
   */
  cancelWorkflow(params: CancelWorkflowParams): Promise<{ workflow: WorkflowRecord; transitions: JobTransition[] }>;
}

export interface CancelWorkflowParams {
  workflowId: string;
  now: number;
  /** Who asked, for the jobs' job.cancelled. */
  actor?: string;
}

/** A workflow as a store returns it. */
export interface WorkflowRecord {
  plan: WorkflowPlan;
  run: WorkflowRun;
  /** The id of each job node's job. */
  jobIds: string[];
  /**
   * Each job node's job as it stands (undefined when retention removed it),
   * with the result the workflow kept for a node that succeeded.
   */
  jobs: (StepJob | undefined)[];
}
