import type { HeartbeatNotice, RecordedFact } from '../../domain/event-facts';
import type { Job } from '../../domain/job';
import type { JobQuery } from '../../domain/job-query';
import { DEFAULT_EVENT_RETENTION, type EventRetention, type RetentionPolicy } from '../../domain/retention';
import type { Schedule } from '../../domain/schedule';
import type { JobTransition } from '../../domain/transition';
import type { Worker } from '../../domain/worker';
import type {
  AckParams,
  BeatParams,
  RecordedBeat,
  BulkChangeParams,
  BulkOutcome,
  ClaimParams,
  ClaimResult,
  DirectParams,
  DiscardWaitingParams,
  DueSchedules,
  EnqueueOutcome,
  ExtendLeaseParams,
  FactPage,
  FailParams,
  FireTicksOutcome,
  FireTicksParams,
  JobStore,
  Page,
  PageRequest,
  PauseParams,
  PromotionPass,
  QueueLimitsParams,
  ProgressParams,
  QueueCounts,
  QueueStats,
  RegisterScheduleParams,
  SchedulePauseParams,
  RecoverParams,
  ReleaseParams,
  RemoveWorkerOutcome,
  RemoveWorkerParams,
  SettlementOutcome,
  StateChange,
  WorkerPageRequest,
  WorkerSnapshot,
  CancelWorkflowParams,
  WorkflowRecord,
} from '../job-store';
import type { NewWorkflow } from '../../domain/workflow-creation';
import type { PublishedSignal, StoreSignal } from '../store-signal';
import { FactFollower } from './fact-follower';
import { HeartbeatFeed } from './heartbeat-feed';
import { RedisKeys } from './keys';
import { openRedis, type RedisConnection } from './redis-connection';
import { RedisProbe } from './redis-probe';
import type { RedisScript } from './script';
import { redisFailure } from './script-errors';
import { ScriptRunner } from './script-runner';
import { ackScript } from './scripts/ack';
import { auditScript } from './scripts/audit';
import { cancelScript } from './scripts/cancel';
import { cancelJobsScript } from './scripts/cancel-jobs';
import { claimScript } from './scripts/claim';
import { deleteJobsScript } from './scripts/delete-jobs';
import { directWorkerScript } from './scripts/direct-worker';
import { discardWaitingScript } from './scripts/discard-waiting';
import { enqueueScript } from './scripts/enqueue';
import { extendLeaseScript } from './scripts/extend-lease';
import { failScript } from './scripts/fail';
import { findExpiredLeasesScript } from './scripts/find-expired-leases';
import { findExpiredWaitingScript } from './scripts/find-expired-waiting';
import { findSilentWorkersScript } from './scripts/find-silent-workers';
import { getJobsScript } from './scripts/get-jobs';
import { getWorkerScript } from './scripts/get-worker';
import { listActiveHeartbeatsScript } from './scripts/list-active-heartbeats';
import { listJobsScript } from './scripts/list-jobs';
import { listQueuesScript } from './scripts/list-queues';
import { listWorkersScript } from './scripts/list-workers';
import { makeAvailableScript } from './scripts/make-available';
import { promoteDueScript } from './scripts/promote-due';
import { pruneFactsScript } from './scripts/prune-facts';
import { pruneTerminalScript } from './scripts/prune-terminal';
import { queueStatsScript } from './scripts/queue-stats';
import { readFactsScript } from './scripts/read-facts';
import { recordBeatScript } from './scripts/record-beat';
import { recordProgressScript } from './scripts/record-progress';
import { recoverScript } from './scripts/recover';
import { registerWorkerScript } from './scripts/register-worker';
import { releaseUndeliveredScript } from './scripts/release-undelivered';
import { removeWorkerScript } from './scripts/remove-worker';
import { retryJobsScript } from './scripts/retry-jobs';
import { setQueueLimitsScript } from './scripts/set-queue-limits';
import { setQueuePausedScript } from './scripts/set-queue-paused';
import { findDueSchedulesScript } from './scripts/find-due-schedules';
import { fireTicksScript } from './scripts/fire-ticks';
import { getScheduleScript } from './scripts/get-schedule';
import { listSchedulesScript } from './scripts/list-schedules';
import { registerScheduleScript } from './scripts/register-schedule';
import { removeScheduleScript } from './scripts/remove-schedule';
import { setSchedulePausedScript } from './scripts/set-schedule-paused';
import { takeSoftTimeoutsScript } from './scripts/take-soft-timeouts';
import { cancelWorkflowScript } from './scripts/cancel-workflow';
import { createWorkflowScript } from './scripts/create-workflow';
import { getWorkflowScript } from './scripts/get-workflow';
import { decodeSignal, encodeSignal } from './signal-codec';
import { redactUrlPasswords } from '../../../lib/redact';

export interface RedisJobStoreOptions {
  url: string;
  /** Key prefix with a {hash tag}; every key of the deployment lives in its slot. */
  prefix: string;
  /** How long `connect` waits for Redis before giving up. */
  connectTimeoutMs?: number;
  /** Told once when a first connection attempt fails and `connect` goes on waiting. */
  onWaiting?: (error: Error) => void;
  /** Time between two probes of whether Redis answers (default 1 s). */
  pingIntervalMs?: number;
  /** How long a probe waits before Redis counts as not answering: the store is then unavailable (default 1 s). */
  pingTimeoutMs?: number;
  /** How long a command waits for Redis before it fails as UNAVAILABLE (default 5 s). */
  commandTimeoutMs?: number;
  /** How many facts the event log keeps, and how long (default DEFAULT_EVENT_RETENTION). */
  events?: EventRetention;
}

/** Most keys one audit examines: far beyond any store a test builds, a bound for an operator's store. */
const AUDIT_KEY_BUDGET = 1_000_000;
/** Most problems one audit reports (the last sentence counts the rest). */
const AUDIT_MAX_PROBLEMS = 1_000;
/** Most facts one read of the log takes, for followers. */
const FOLLOW_PAGE_SIZE = 1_000;
/** How long a follower's read blocks waiting for facts (the loop outlives its last follower by at most this). */
const FOLLOW_BLOCK_MS = 5_000;

/**
 * RedisJobStore keeps the jobs of every server replica in one Redis (or
 * Redis Cluster). Each operation is one Lua script (src/store/redis/lua,
 * declared in scripts/), so one round trip and atomic: replicas never race
 * on a read-modify-write. Signals travel on a pub/sub channel, so a change
 * made through any replica reaches the streams held by every other. Each
 * change's fact is appended to the event log (a stream) by the script that
 * makes it; followers of the log and of heartbeats use connections of
 * their own, opened when first needed.
 *
 * The store is available while commands run, the signal channel is
 * subscribed and Redis answers probes in time (asked on a connection of
 * their own, so that a busy replica never takes its own backlog for an
 * unreachable Redis): a Redis that keeps its connections open but answers
 * nothing (stopped, overloaded) makes the store unavailable, which the
 * server reports as NOT_SERVING.
 */
export class RedisJobStore implements JobStore {
  private readonly keys: RedisKeys;
  private readonly scripts: ScriptRunner;
  private readonly probe: RedisProbe;
  private readonly facts: FactFollower;
  private readonly heartbeats: HeartbeatFeed;
  private readonly listeners = new Set<(signal: StoreSignal) => void>();
  /** Whether commands can run. */
  private isCommandReady = false;
  /** Whether the signal channel is subscribed, so that signals of every replica reach this one. */
  private isSubscribed = false;
  /** Whether the probe's connection is up and Redis answered its last probe in time. */
  private isAnswering = false;
  private isAvailable = false;

  private constructor(
    private readonly connection: RedisConnection,
    prefix: string,
    probe: { intervalMs: number; timeoutMs: number },
    private readonly events: EventRetention,
    private readonly commandTimeoutMs: number,
  ) {
    this.keys = new RedisKeys(prefix);
    this.scripts = new ScriptRunner(connection.command, this.keys.scriptKeys(), { eventLogLength: events.maxCount });
    this.facts = new FactFollower({
      open: connection.open,
      key: this.keys.events,
      read: (after, limit) => this.run(readFactsScript, after === undefined ? { limit } : { after, limit }),
      blockMs: FOLLOW_BLOCK_MS,
      pageSize: FOLLOW_PAGE_SIZE,
    });
    this.heartbeats = new HeartbeatFeed(connection.open, this.keys.heartbeats);
    // A keyed read, so that in a cluster it asks the node that holds the deployment's slot; on a connection of
    // its own, so that it never waits behind this replica's scripts (a busy replica is not an unreachable Redis).
    this.probe = new RedisProbe(
      () => connection.probe.exists(this.keys.seq),
      probe,
      (isAnswering) => {
        this.isAnswering = isAnswering;
        this.updateAvailability();
      },
    );
    connection.command.on('ready', () => {
      this.isCommandReady = true;
      this.updateAvailability();
    });
    connection.probe.on('ready', () => {
      // The connection's handshake was just answered.
      this.isAnswering = true;
      this.updateAvailability();
    });
    // A probe cannot ask on a lost connection (its question in flight fails as the connection drops).
    connection.probe.on('close', () => {
      this.isAnswering = false;
      this.updateAvailability();
    });
    connection.command.on('close', () => {
      this.isCommandReady = false;
      this.updateAvailability();
    });
    // The subscriber reconnects on a schedule of its own. Until its SUBSCRIBE is answered,
    // signals published through any replica are lost to this one, so the store is not
    // available before then: the availability change then makes waiting streams look again.
    connection.subscriber.on('ready', () => this.subscribeChannel());
    connection.subscriber.on('close', () => {
      this.isSubscribed = false;
      this.updateAvailability();
    });
    // Connection errors surface as failed calls and availability changes; the event must have a listener.
    connection.command.on('error', () => {});
    connection.probe.on('error', () => {});
    connection.subscriber.on('error', () => {});
    connection.subscriber.on('message', (_channel: string, message: string) => {
      const signal = decodeSignal(message);
      if (signal !== undefined) this.emit(signal);
    });
  }

  /** Connects (waiting for Redis up to the timeout, through failed attempts) and subscribes to the signal channel. */
  static async connect(options: RedisJobStoreOptions): Promise<RedisJobStore> {
    const commandTimeoutMs = options.commandTimeoutMs ?? 5_000;
    const connection = openRedis(options.url, commandTimeoutMs);
    const probe = { intervalMs: options.pingIntervalMs ?? 1_000, timeoutMs: options.pingTimeoutMs ?? 1_000 };
    const store = new RedisJobStore(connection, options.prefix, probe, options.events ?? DEFAULT_EVENT_RETENTION, commandTimeoutMs);
    const timeoutMs = options.connectTimeoutMs ?? 10_000;
    let timer: NodeJS.Timeout | undefined;
    const timedOut = new Promise<never>((_, reject) => {
      timer = setTimeout(
        () => reject(new Error(`Redis at ${redactUrlPasswords(options.url)} did not answer within ${timeoutMs} ms`)),
        timeoutMs,
      );
    });
    // A failed first attempt is not the end: the connections keep retrying (a replica
    // may start while Redis restarts), and the store is ready once both are up.
    store.connection.command.connect().catch((error: unknown) => {
      if (error instanceof Error) options.onWaiting?.(error);
    });
    store.connection.subscriber.connect().catch(() => {});
    store.connection.probe.connect().catch(() => {});
    try {
      await Promise.race([store.whenAvailable(), timedOut]);
    } catch (error) {
      await store.close();
      throw error;
    } finally {
      clearTimeout(timer);
    }
    store.probe.start();
    return store;
  }

  async enqueue(jobs: readonly Job[]): Promise<EnqueueOutcome[]> {
    return jobs.length > 0 ? this.run(enqueueScript, jobs) : [];
  }

  async getJob(jobId: string): Promise<Job | undefined> {
    return (await this.getJobs([jobId]))[0];
  }

  async getJobs(jobIds: readonly string[]): Promise<(Job | undefined)[]> {
    return jobIds.length === 0 ? [] : this.run(getJobsScript, jobIds);
  }

  claim(params: ClaimParams): Promise<ClaimResult> {
    return this.run(claimScript, params);
  }

  releaseUndelivered(params: ReleaseParams): Promise<JobTransition[]> {
    return this.run(releaseUndeliveredScript, params);
  }

  ack(params: AckParams): Promise<SettlementOutcome[]> {
    return this.run(ackScript, params);
  }

  fail(params: FailParams): Promise<SettlementOutcome[]> {
    return this.run(failScript, params);
  }

  extendLease(params: ExtendLeaseParams): Promise<number> {
    return this.run(extendLeaseScript, params);
  }

  recordProgress(params: ProgressParams): Promise<{ applied: boolean; leaseExpiresAt?: number }> {
    return this.run(recordProgressScript, params);
  }

  cancel(jobId: string, now: number): Promise<StateChange> {
    return this.run(cancelScript, { jobId, now });
  }

  activate(jobId: string, now: number): Promise<StateChange> {
    return this.run(makeAvailableScript, { jobId, from: 'pending', now });
  }

  retry(jobId: string, now: number): Promise<StateChange> {
    return this.run(makeAvailableScript, { jobId, from: 'discarded', now });
  }

  promoteDue(now: number, limit: number): Promise<PromotionPass> {
    return this.run(promoteDueScript, { now, limit });
  }

  findExpiredWaiting(now: number, limit: number): Promise<Job[]> {
    return this.run(findExpiredWaitingScript, { now, limit });
  }

  discardWaiting(params: DiscardWaitingParams): Promise<JobTransition[]> {
    return this.run(discardWaitingScript, params);
  }

  takeDueSoftTimeouts(now: number, limit: number): Promise<{ jobId: string; workerId: string }[]> {
    return this.run(takeSoftTimeoutsScript, { now, limit });
  }

  findExpiredLeases(now: number, limit: number): Promise<Job[]> {
    return this.run(findExpiredLeasesScript, { now, limit });
  }

  listActiveHeartbeats(limit: number): Promise<{ queue: string; renewedAt: number }[]> {
    return this.run(listActiveHeartbeatsScript, { limit });
  }

  recover(params: RecoverParams): Promise<JobTransition[]> {
    return this.run(recoverScript, params);
  }

  pruneTerminal(now: number, retention: RetentionPolicy, limit: number): Promise<number> {
    return this.run(pruneTerminalScript, { now, retention, limit });
  }

  registerWorker(worker: Worker): Promise<void> {
    return this.run(registerWorkerScript, worker);
  }

  getWorker(workerId: string): Promise<WorkerSnapshot | undefined> {
    return this.run(getWorkerScript, { workerId });
  }

  listWorkers(request: WorkerPageRequest): Promise<Page<WorkerSnapshot>> {
    return this.run(listWorkersScript, request);
  }

  findSilentWorkers(cutoff: number, limit: number): Promise<WorkerSnapshot[]> {
    return this.run(findSilentWorkersScript, { cutoff, limit });
  }

  recordBeats(params: readonly BeatParams[]): Promise<RecordedBeat[]> {
    return this.run(recordBeatScript, params);
  }

  directWorker(params: DirectParams): Promise<'applied' | 'conflict'> {
    return this.run(directWorkerScript, params);
  }

  removeWorker(params: RemoveWorkerParams): Promise<RemoveWorkerOutcome> {
    return this.run(removeWorkerScript, params);
  }

  listQueues(request: PageRequest): Promise<Page<QueueCounts>> {
    return this.run(listQueuesScript, request);
  }

  queueStats(queue: string, now: number): Promise<QueueStats> {
    return this.run(queueStatsScript, { queue, now });
  }

  setQueuePaused(params: PauseParams): Promise<{ changed: boolean }> {
    return this.run(setQueuePausedScript, params);
  }

  registerSchedule(params: RegisterScheduleParams): Promise<{ schedule: Schedule; created: boolean }> {
    return this.run(registerScheduleScript, params);
  }

  removeSchedule(name: string): Promise<void> {
    return this.run(removeScheduleScript, name);
  }

  getSchedule(name: string): Promise<Schedule | undefined> {
    return this.run(getScheduleScript, name);
  }

  listSchedules(request: PageRequest): Promise<Page<Schedule>> {
    return this.run(listSchedulesScript, request);
  }

  setSchedulePaused(params: SchedulePauseParams): Promise<{ schedule: Schedule; changed: boolean }> {
    return this.run(setSchedulePausedScript, params);
  }

  findDueSchedules(now: number, limit: number): Promise<DueSchedules> {
    return this.run(findDueSchedulesScript, { now, limit });
  }

  fireTicks(params: FireTicksParams): Promise<FireTicksOutcome> {
    return this.run(fireTicksScript, params);
  }

  createWorkflow(workflow: NewWorkflow): Promise<void> {
    return this.run(createWorkflowScript, workflow);
  }

  getWorkflow(workflowId: string): Promise<WorkflowRecord | undefined> {
    return this.run(getWorkflowScript, workflowId);
  }

  cancelWorkflow(params: CancelWorkflowParams): Promise<{ workflow: WorkflowRecord; transitions: JobTransition[] }> {
    return this.run(cancelWorkflowScript, params);
  }

  setQueueLimits(params: QueueLimitsParams): Promise<void> {
    return this.run(setQueueLimitsScript, params);
  }

  async listJobs(query: JobQuery): Promise<Page<Job>> {
    const { jobs, nextAfter } = await this.run(listJobsScript, { query, withJobs: true });
    return nextAfter === undefined ? { items: jobs } : { items: jobs, nextAfter };
  }

  async findJobIds(query: JobQuery): Promise<Page<string>> {
    const { ids, nextAfter } = await this.run(listJobsScript, { query, withJobs: false });
    return nextAfter === undefined ? { items: ids } : { items: ids, nextAfter };
  }

  cancelJobs(params: BulkChangeParams): Promise<BulkOutcome[]> {
    return params.jobIds.length === 0 ? Promise.resolve([]) : this.run(cancelJobsScript, params);
  }

  retryJobs(params: BulkChangeParams): Promise<BulkOutcome[]> {
    return params.jobIds.length === 0 ? Promise.resolve([]) : this.run(retryJobsScript, params);
  }

  deleteJobs(params: BulkChangeParams): Promise<BulkOutcome[]> {
    return params.jobIds.length === 0 ? Promise.resolve([]) : this.run(deleteJobsScript, params);
  }

  async readFacts(request: { after?: string; limit: number }): Promise<FactPage> {
    const { facts, oldest } = await this.run(readFactsScript, request);
    return oldest === undefined ? { facts } : { facts, oldest };
  }

  followFacts(after: string | undefined, listener: (facts: RecordedFact[]) => void): Promise<() => void> {
    return this.facts.follow(after, listener);
  }

  pruneFacts(now: number): Promise<number> {
    return this.run(pruneFactsScript, { now, maxAgeMs: this.events.maxAgeMs });
  }

  followHeartbeats(listener: (notice: HeartbeatNotice) => void): Promise<() => void> {
    return this.guard(this.heartbeats.follow(listener, this.commandTimeoutMs));
  }

  audit(): Promise<string[]> {
    return this.run(auditScript, { scanPattern: this.keys.scanPattern(), keyBudget: AUDIT_KEY_BUDGET, maxProblems: AUDIT_MAX_PROBLEMS });
  }

  subscribe(listener: (signal: StoreSignal) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  async publish(signal: PublishedSignal): Promise<void> {
    await this.guard(this.connection.command.publish(this.keys.channel, encodeSignal(signal)));
  }

  async close(): Promise<void> {
    this.probe.stop();
    this.listeners.clear();
    this.facts.close();
    this.heartbeats.close();
    this.connection.subscriber.disconnect();
    this.connection.probe.disconnect();
    this.connection.command.disconnect();
  }

  /** Runs a declared script; every failure leaves as an OjsError. */
  private run<P, R>(script: RedisScript<P, R>, params: P): Promise<R> {
    return this.guard(this.scripts.run(script, params));
  }

  /** Every Redis failure becomes an OjsError here (script-errors.ts redisFailure). */
  private async guard<T>(promise: Promise<T>): Promise<T> {
    try {
      return await promise;
    } catch (error) {
      throw redisFailure(error);
    }
  }

  /** (Re)subscribes the signal channel after the subscriber connected. */
  private subscribeChannel(): void {
    this.connection.subscriber.subscribe(this.keys.channel).then(
      () => {
        this.isSubscribed = true;
        this.updateAvailability();
        return undefined;
      },
      () => {}, // The connection dropped again; its next 'ready' subscribes again.
    );
  }

  /** Resolves once the store is available (commands run, the channel is subscribed and the probe can ask). */
  private whenAvailable(): Promise<void> {
    if (this.isAvailable) return Promise.resolve();
    return new Promise((resolve) => {
      const unsubscribe = this.subscribe((signal) => {
        if (signal.kind !== 'availability' || !signal.isAvailable) return;
        unsubscribe();
        resolve();
      });
    });
  }

  private updateAvailability(): void {
    const isAvailable = this.isCommandReady && this.isSubscribed && this.isAnswering;
    if (this.isAvailable === isAvailable) return;
    this.isAvailable = isAvailable;
    this.emit({ kind: 'availability', isAvailable });
  }

  private emit(signal: StoreSignal): void {
    for (const listener of this.listeners) listener(signal);
  }
}
