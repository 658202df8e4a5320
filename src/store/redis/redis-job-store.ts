import type { Job } from '../../domain/job';
import type { RetentionPolicy } from '../../domain/retention';
import type { JobTransition } from '../../domain/transition';
import type { Worker } from '../../domain/worker';
import type {
  AckParams,
  BeatOutcome,
  BeatParams,
  ClaimParams,
  ClaimResult,
  DirectParams,
  DiscardWaitingParams,
  ExtendLeaseParams,
  FailParams,
  JobStore,
  Page,
  PageRequest,
  ProgressParams,
  QueueCounts,
  RecoverParams,
  ReleaseParams,
  RemoveWorkerOutcome,
  RemoveWorkerParams,
  SettlementOutcome,
  StateChange,
  WorkerPageRequest,
  WorkerSnapshot,
} from '../job-store';
import type { PublishedSignal, StoreSignal } from '../store-signal';
import { RedisKeys } from './keys';
import { openRedis, type RedisConnection } from './redis-connection';
import { RedisProbe } from './redis-probe';
import type { RedisScript } from './script';
import { redisFailure } from './script-errors';
import { ScriptRunner } from './script-runner';
import { ackScript } from './scripts/ack';
import { auditScript } from './scripts/audit';
import { cancelScript } from './scripts/cancel';
import { claimScript } from './scripts/claim';
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
import { listQueuesScript } from './scripts/list-queues';
import { listWorkersScript } from './scripts/list-workers';
import { makeAvailableScript } from './scripts/make-available';
import { promoteDueScript } from './scripts/promote-due';
import { pruneTerminalScript } from './scripts/prune-terminal';
import { recordBeatScript } from './scripts/record-beat';
import { recordProgressScript } from './scripts/record-progress';
import { recoverScript } from './scripts/recover';
import { registerWorkerScript } from './scripts/register-worker';
import { releaseUndeliveredScript } from './scripts/release-undelivered';
import { removeWorkerScript } from './scripts/remove-worker';
import { takeSoftTimeoutsScript } from './scripts/take-soft-timeouts';
import { decodeSignal, encodeSignal } from './signal-codec';

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
}

/** Most keys one audit examines: far beyond any store a test builds, a bound for an operator's store. */
const AUDIT_KEY_BUDGET = 1_000_000;
/** Most problems one audit reports (the last sentence counts the rest). */
const AUDIT_MAX_PROBLEMS = 1_000;

/**
 * RedisJobStore keeps the jobs of every server replica in one Redis (or
 * Redis Cluster). Each operation is one Lua script (src/store/redis/lua,
 * declared in scripts/), so one round trip and atomic: replicas never race
 * on a read-modify-write. Signals travel on a pub/sub channel, so a change
 * made through any replica reaches the streams held by every other.
 *
 * The store is available while commands run, the signal channel is
 * subscribed and Redis answers probes in time: a Redis that keeps its
 * connections open but answers nothing (stopped, overloaded) makes the
 * store unavailable, which the server reports as NOT_SERVING.
 */
export class RedisJobStore implements JobStore {
  private readonly keys: RedisKeys;
  private readonly scripts: ScriptRunner;
  private readonly probe: RedisProbe;
  private readonly listeners = new Set<(signal: StoreSignal) => void>();
  /** Whether commands can run. */
  private isCommandReady = false;
  /** Whether the signal channel is subscribed, so that signals of every replica reach this one. */
  private isSubscribed = false;
  /** Whether Redis answered the last probe in time. */
  private isAnswering = true;
  private isAvailable = false;

  private constructor(
    private readonly connection: RedisConnection,
    prefix: string,
    probe: { intervalMs: number; timeoutMs: number },
  ) {
    this.keys = new RedisKeys(prefix);
    this.scripts = new ScriptRunner(connection.command, this.keys.scriptKeys());
    // A keyed read, so that in a cluster it asks the node that holds the deployment's slot.
    this.probe = new RedisProbe(
      () => connection.command.exists(this.keys.seq),
      probe,
      (isAnswering) => {
        this.isAnswering = isAnswering;
        this.updateAvailability();
      },
    );
    connection.command.on('ready', () => {
      // The connection's handshake was just answered.
      this.isCommandReady = true;
      this.isAnswering = true;
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
    connection.subscriber.on('error', () => {});
    connection.subscriber.on('message', (_channel: string, message: string) => {
      const signal = decodeSignal(message);
      if (signal !== undefined) this.emit(signal);
    });
  }

  /** Connects (waiting for Redis up to the timeout, through failed attempts) and subscribes to the signal channel. */
  static async connect(options: RedisJobStoreOptions): Promise<RedisJobStore> {
    const connection = openRedis(options.url, options.commandTimeoutMs ?? 5_000);
    const probe = { intervalMs: options.pingIntervalMs ?? 1_000, timeoutMs: options.pingTimeoutMs ?? 1_000 };
    const store = new RedisJobStore(connection, options.prefix, probe);
    const timeoutMs = options.connectTimeoutMs ?? 10_000;
    let timer: NodeJS.Timeout | undefined;
    const timedOut = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`Redis at ${options.url} did not answer within ${timeoutMs} ms`)), timeoutMs);
    });
    // A failed first attempt is not the end: the connections keep retrying (a replica
    // may start while Redis restarts), and the store is ready once both are up.
    store.connection.command.connect().catch((error: unknown) => {
      if (error instanceof Error) options.onWaiting?.(error);
    });
    store.connection.subscriber.connect().catch(() => {});
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

  async enqueue(jobs: readonly Job[]): Promise<void> {
    if (jobs.length > 0) await this.run(enqueueScript, jobs);
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

  promoteDue(now: number, limit: number): Promise<JobTransition[]> {
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

  recordBeat(params: BeatParams): Promise<BeatOutcome> {
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
    this.connection.subscriber.disconnect();
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

  /** Resolves once the store is available (commands run and the channel is subscribed). */
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
