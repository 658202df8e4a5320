import type { Cluster, Redis } from 'ioredis';
import type { FailureOutcome } from '../../domain/failure';
import type { Job, JobState } from '../../domain/job';
import type { JsonValue } from '../../domain/json';
import { statesLeadingTo } from '../../domain/job-state-machine';
import type { RetentionPolicy } from '../../domain/retention';
import type { JobTransition } from '../../domain/transition';
import { desiredState, type Worker, type WorkerState } from '../../domain/worker';
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
  WorkerStateFields,
} from '../job-store';
import type { PublishedSignal, StoreSignal } from '../store-signal';
import { fromFlatHash, type FlatHash } from './hash-fields';
import { decodeClaimedJob, decodeJob, encodeJson, newJobArgs } from './job-codec';
import { RedisKeys } from './keys';
import { openRedis, type RedisConnection } from './redis-connection';
import { redisFailure, refusalError } from './script-errors';
import { defineScripts, type ScriptArg, type ScriptName, type ScriptRunner } from './scripts';
import { decodeSignal, encodeSignal } from './signal-codec';
import { decodeWorker, newWorkerPairs } from './worker-codec';

export interface RedisJobStoreOptions {
  url: string;
  /** Key prefix with a {hash tag}; every key of the deployment lives in its slot. */
  prefix: string;
  /** How long `connect` waits for Redis before giving up. */
  connectTimeoutMs?: number;
  /** Told once when a first connection attempt fails and `connect` goes on waiting. */
  onWaiting?: (error: Error) => void;
}

/** One item of the settle script (lua/settle.lua): what to check and what to apply. */
interface SettleItem {
  jobId: string;
  leaseToken: string;
  state: JobState;
  /** The decided outcome; absent for an ack. */
  outcome?: FailureOutcome;
  result?: JsonValue;
  requireExpired?: boolean;
}

type Reply = unknown[];

/**
 * RedisJobStore keeps the jobs of every server replica in one Redis (or
 * Redis Cluster). Each state change is one Lua script (src/store/redis/lua),
 * so one round trip and atomic: replicas never race on a read-modify-write.
 * Signals travel on a pub/sub channel, so a change made through any replica
 * reaches the streams held by every other.
 */
export class RedisJobStore implements JobStore {
  private readonly keys: RedisKeys;
  private readonly scriptKeys: string[];
  private readonly run: ScriptRunner;
  private readonly listeners = new Set<(signal: StoreSignal) => void>();
  /** Whether commands can run. */
  private isCommandReady = false;
  /** Whether the signal channel is subscribed, so that signals of every replica reach this one. */
  private isSubscribed = false;
  private isAvailable = false;

  private constructor(
    private readonly connection: RedisConnection,
    prefix: string,
  ) {
    this.keys = new RedisKeys(prefix);
    this.scriptKeys = this.keys.scriptKeys();
    this.run = defineScripts(connection.command);
    connection.command.on('ready', () => {
      this.isCommandReady = true;
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
    const store = new RedisJobStore(openRedis(options.url), options.prefix);
    const timeoutMs = options.connectTimeoutMs ?? 10_000;
    let timer: NodeJS.Timeout | undefined;
    const timedOut = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`Redis at ${options.url} did not answer within ${timeoutMs} ms`)), timeoutMs);
    });
    // A failed first attempt is not the end: the connections keep retrying (a replica
    // may start while Redis restarts), and the store is ready once both are up.
    store.connection.command.connect().catch((error: Error) => options.onWaiting?.(error));
    store.connection.subscriber.connect().catch(() => {});
    try {
      await Promise.race([store.whenAvailable(), timedOut]);
    } catch (error) {
      await store.close();
      throw error;
    } finally {
      clearTimeout(timer);
    }
    return store;
  }

  async enqueue(jobs: readonly Job[]): Promise<void> {
    // buildJobs creates a batch at one instant; the script takes it as "now".
    const args: ScriptArg[] = [jobs[0]?.createdAt ?? 0, ...jobs.flatMap(newJobArgs)];
    const reply = (await this.call('enqueue', args)) as string[];
    if (reply[0] === 'duplicate') throw refusalError({ status: 'duplicate', jobId: reply[1]! });
  }

  async getJob(jobId: string): Promise<Job | undefined> {
    return (await this.getJobs([jobId]))[0];
  }

  async getJobs(jobIds: readonly string[]): Promise<(Job | undefined)[]> {
    if (jobIds.length === 0) return [];
    const pipeline = this.connection.command.pipeline();
    for (const id of jobIds) pipeline.hgetall(this.keys.jobKey(id));
    const replies = await this.guard(pipeline.exec());
    return (replies ?? []).map(([error, hash]) => {
      if (error !== null) throw redisFailure(error);
      return decodeJob(hash as Record<string, string>);
    });
  }

  async claim(params: ClaimParams): Promise<ClaimResult> {
    const reply = (await this.call('claim', [
      params.now,
      params.workerId,
      params.max,
      params.leaseNonce,
      params.confirmWithinMs,
      ...params.queues,
    ])) as Reply;
    if (reply[0] === 'not_found') throw refusalError({ status: 'not_found', workerId: params.workerId });
    const jobs = (reply[3] as string[][]).map((claimed) => decodeClaimedJob(claimed, params.workerId, params.leaseNonce, params.now));
    return { isRunning: reply[1] === 1, freeCapacity: Math.max(0, Number(reply[2])), jobs };
  }

  async releaseUndelivered(params: ReleaseParams): Promise<JobTransition[]> {
    const args: ScriptArg[] = [params.now, params.requireUnconfirmedLapse ? 1 : 0];
    for (const lease of params.leases) args.push(lease.jobId, lease.leaseToken);
    return ((await this.call('release-undelivered', args)) as Reply[]).map(decodeTransition);
  }

  async ack(params: AckParams): Promise<SettlementOutcome[]> {
    const items = params.items.map((item) => ({ ...item, state: 'completed' as const }));
    return (await this.settle('ack', params.workerId, items, params.now)).outcomes;
  }

  async fail(params: FailParams): Promise<SettlementOutcome[]> {
    const items = params.items.map((item) => ({ ...item, state: item.outcome.state }));
    return (await this.settle('fail', params.workerId, items, params.now)).outcomes;
  }

  async extendLease(params: ExtendLeaseParams): Promise<number> {
    const reply = (await this.call('extend-lease', [params.now, params.workerId, params.jobId, params.leaseToken])) as string[];
    if (reply[0] !== 'ok') throw refusalError({ status: reply[0]!, jobId: params.jobId, state: reply[1] ?? '' });
    return Number(reply[1]);
  }

  async recordProgress(params: ProgressParams): Promise<{ applied: boolean; leaseExpiresAt?: number }> {
    const reply = (await this.call('record-progress', [
      params.now,
      params.workerId,
      params.jobId,
      params.leaseToken,
      params.progress ?? '',
      encodeJson(params.data),
      encodeJson(params.checkpoint),
    ])) as string[];
    return reply[0] === 'ok' ? { applied: true, leaseExpiresAt: Number(reply[1]) } : { applied: false };
  }

  async cancel(jobId: string, now: number): Promise<StateChange> {
    return this.manualTransition('cancel', jobId, 'cancelled', [now, jobId, statesLeadingTo('cancelled').join(',')]);
  }

  async activate(jobId: string, now: number): Promise<StateChange> {
    return this.manualTransition('activate', jobId, 'available', [now, jobId]);
  }

  async retry(jobId: string, now: number): Promise<StateChange> {
    return this.manualTransition('retry', jobId, 'available', [now, jobId]);
  }

  async promoteDue(now: number, limit: number): Promise<JobTransition[]> {
    return ((await this.call('promote-due', [now, limit])) as Reply[]).map(decodeTransition);
  }

  async findExpiredWaiting(now: number, limit: number): Promise<Job[]> {
    return ((await this.call('find-expired-waiting', [now, limit])) as FlatHash[]).flatMap((hash) => decodeJob(hash) ?? []);
  }

  async discardWaiting(params: DiscardWaitingParams): Promise<JobTransition[]> {
    const args: ScriptArg[] = [params.now];
    for (const item of params.items) args.push(item.jobId, item.expectedState, encodeJson(item.error), encodeJson(item.errors));
    return ((await this.call('discard-waiting', args)) as Reply[]).map(decodeTransition);
  }

  async takeDueSoftTimeouts(now: number, limit: number): Promise<{ jobId: string; workerId: string }[]> {
    const reply = (await this.call('take-soft-timeouts', [now, limit])) as [string, string][];
    return reply.map(([jobId, workerId]) => ({ jobId, workerId }));
  }

  async findExpiredLeases(now: number, limit: number): Promise<Job[]> {
    return ((await this.call('find-expired-leases', [now, limit])) as FlatHash[]).flatMap((hash) => decodeJob(hash) ?? []);
  }

  async listActiveHeartbeats(limit: number): Promise<{ queue: string; renewedAt: number }[]> {
    const reply = (await this.call('list-active-heartbeats', [limit])) as [string, string][];
    return reply.map(([queue, renewedAt]) => ({ queue, renewedAt: Number(renewedAt) }));
  }

  async recover(params: RecoverParams): Promise<JobTransition[]> {
    const items = params.items.map((item) => ({ ...item, state: item.outcome.state }));
    return (await this.settle('recover', '', items, params.now)).transitions;
  }

  async pruneTerminal(now: number, retention: RetentionPolicy, limit: number): Promise<number> {
    const { completedMs, cancelledMs, discardedMs, maxJobs } = retention;
    return Number(await this.call('prune-terminal', [now, completedMs, cancelledMs, discardedMs, maxJobs, limit]));
  }

  async registerWorker(worker: Worker): Promise<void> {
    const reply = (await this.call('register-worker', [worker.workerId, worker.lastBeatAt, ...newWorkerPairs(worker)])) as string[];
    if (reply[0] === 'duplicate') throw refusalError({ status: 'duplicate', workerId: worker.workerId });
  }

  async getWorker(workerId: string): Promise<WorkerSnapshot | undefined> {
    return (await this.readWorkers(['one', workerId]))[0];
  }

  async listWorkers(request: WorkerPageRequest): Promise<Page<WorkerSnapshot>> {
    // TODO(issue 8): a paged script with a scan budget instead of reading every worker.
    const all = (await this.readWorkers(['all']))
      .filter(({ worker }) => request.after === undefined || worker.workerId > request.after)
      .toSorted((a, b) => (a.worker.workerId < b.worker.workerId ? -1 : 1));
    const { filter } = request;
    const budget = filter === undefined ? request.limit : request.scanBudget;
    const items: WorkerSnapshot[] = [];
    let examined = 0;
    for (const snapshot of all) {
      if (items.length >= request.limit || examined >= budget) return { items, nextAfter: all[examined - 1]!.worker.workerId };
      examined += 1;
      if (filter?.label !== undefined && !snapshot.worker.labels.includes(filter.label)) continue;
      if (filter?.queue !== undefined && !snapshot.worker.queues.includes(filter.queue)) continue;
      items.push(snapshot);
    }
    return { items };
  }

  async findSilentWorkers(cutoff: number, limit: number): Promise<WorkerSnapshot[]> {
    return this.readWorkers(['silent', cutoff, limit]);
  }

  async recordBeat(params: BeatParams): Promise<BeatOutcome> {
    const reply = (await this.call('record-beat', [
      params.now,
      params.workerId,
      params.sequence,
      ...stateChangeArgs(params),
      JSON.stringify(params.activeJobIds),
      ...params.activeJobIds,
    ])) as Reply;
    if (reply[0] === 'not_found') throw refusalError({ status: 'not_found', workerId: params.workerId });
    return {
      result: reply[0] as BeatOutcome['result'],
      desiredState: reply[1] as WorkerState,
      cancelledJobIds: (reply[2] as string[] | undefined) ?? [],
      timedOutJobIds: (reply[3] as string[] | undefined) ?? [],
      reclaimedJobIds: (reply[4] as string[] | undefined) ?? [],
    };
  }

  async directWorker(params: DirectParams): Promise<'applied' | 'conflict'> {
    const reply = (await this.call('direct-worker', [params.workerId, ...stateChangeArgs(params)])) as string[];
    if (reply[0] === 'not_found') throw refusalError({ status: 'not_found', workerId: params.workerId });
    return reply[0] as 'applied' | 'conflict';
  }

  async removeWorker(params: RemoveWorkerParams): Promise<RemoveWorkerOutcome> {
    const items = params.recoveries.map((item) => ({ ...item, state: item.outcome.state }));
    const { removed, transitions } = await this.settle('remove', params.workerId, items, params.now, params.ifLastBeatAt);
    return { removed, transitions };
  }

  async listQueues(request: PageRequest): Promise<Page<QueueCounts>> {
    // TODO(issue 8): a paged script over an ordered queue index instead of reading every queue.
    const queues = (await this.queueCounts()).filter((counts) => request.after === undefined || counts.queue > request.after);
    const items = queues.slice(0, request.limit);
    return queues.length > request.limit ? { items, nextAfter: items.at(-1)!.queue } : { items };
  }

  async audit(): Promise<string[]> {
    // TODO(issue 8): the Redis store's invariant checker.
    return [];
  }

  private async queueCounts(): Promise<QueueCounts[]> {
    const reply = (await this.call('queue-counts', [])) as [string, FlatHash][];
    return reply
      .map(([queue, hash]) => {
        const counts = fromFlatHash(hash);
        const count = (state: JobState): number => Number(counts[state] ?? 0);
        return {
          queue,
          scheduled: count('scheduled'),
          available: count('available'),
          pending: count('pending'),
          active: count('active'),
          completed: count('completed'),
          retryable: count('retryable'),
          cancelled: count('cancelled'),
          discarded: count('discarded'),
        };
      })
      .sort((a, b) => (a.queue < b.queue ? -1 : a.queue > b.queue ? 1 : 0));
  }

  subscribe(listener: (signal: StoreSignal) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  async publish(signal: PublishedSignal): Promise<void> {
    await this.guard(this.connection.command.publish(this.keys.channel, encodeSignal(signal)));
  }

  async close(): Promise<void> {
    this.listeners.clear();
    this.connection.subscriber.disconnect();
    this.connection.command.disconnect();
  }

  private async settle(mode: string, workerId: string, items: readonly SettleItem[], now: number, ifLastBeatAt?: number) {
    const args: ScriptArg[] = [now, mode, workerId, ifLastBeatAt ?? '', items.length];
    for (const item of items) {
      const outcome = item.outcome;
      if (outcome === undefined) {
        args.push(item.jobId, item.leaseToken, encodeJson(item.result));
        continue;
      }
      args.push(
        item.jobId,
        item.leaseToken,
        item.state,
        outcome.state === 'retryable' ? outcome.nextRetryAt : '',
        outcome.state === 'discarded' && outcome.deadLetter ? 1 : 0,
        encodeJson(outcome.error),
        encodeJson(outcome.errors),
        item.requireExpired === true ? 1 : 0,
      );
    }
    const reply = (await this.call('settle', args)) as [string, number, Reply[]];
    const outcomes = reply[2].map((result, i): SettlementOutcome => {
      const [status, state, transition] = result as [string, string, Reply | undefined];
      const item = items[i]!;
      if (status !== 'ok') return { ok: false, error: refusalError({ status, jobId: item.jobId, state }) };
      const settled: SettlementOutcome = { ok: true, transition: decodeTransition(transition!) };
      if (item.outcome !== undefined) settled.transition.errorType = item.outcome.error.type;
      if (item.outcome?.state === 'retryable') settled.nextRetryAt = item.outcome.nextRetryAt;
      return settled;
    });
    const transitions = outcomes.flatMap((o) => (o.ok ? [o.transition] : []));
    return { removed: reply[1] === 1, outcomes, transitions };
  }

  private async manualTransition(script: ScriptName, jobId: string, wanted: JobState, args: ScriptArg[]): Promise<StateChange> {
    const reply = (await this.call(script, args)) as Reply;
    if (reply[0] !== 'ok') throw refusalError({ status: String(reply[0]), jobId, state: String(reply[1] ?? ''), wanted });
    const change: StateChange = { job: decodeJob(reply[3] as FlatHash)!, from: reply[1] as JobState };
    if (reply[2] !== '') change.workerId = reply[2] as string;
    return change;
  }

  private async readWorkers(args: ScriptArg[]): Promise<WorkerSnapshot[]> {
    const reply = (await this.call('read-workers', args)) as [FlatHash, string[]][];
    return reply.map(([hash, heldJobIds]) => ({ worker: decodeWorker(hash), heldJobIds }));
  }

  private call(name: ScriptName, args: readonly ScriptArg[]): Promise<unknown> {
    return this.guard(this.run(name, this.scriptKeys, args));
  }

  /** Every Redis failure becomes an OjsError here: UNAVAILABLE for connection trouble. */
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
    const isAvailable = this.isCommandReady && this.isSubscribed;
    if (this.isAvailable === isAvailable) return;
    this.isAvailable = isAvailable;
    this.emit({ kind: 'availability', isAvailable });
  }

  private emit(signal: StoreSignal): void {
    for (const listener of this.listeners) listener(signal);
  }
}

/**
 * A compare-and-set of a worker's state as record-beat.lua and
 * direct-worker.lua take it: expected state and directive, then the next
 * state, directive and desired state ('' for no directive).
 */
function stateChangeArgs(change: { expected: WorkerStateFields; next: WorkerStateFields }): ScriptArg[] {
  const { expected, next } = change;
  return [expected.state, expected.directive ?? '', next.state, next.directive ?? '', desiredState(next)];
}

/** A transition as scripts return it: id, type, queue, from, to, attempt, worker, started at ('' for none). */
function decodeTransition(reply: Reply): JobTransition {
  const [jobId, type, queue, from, to, attempt, workerId, startedAt] = reply as string[];
  const transition: JobTransition = {
    jobId: jobId!,
    type: type!,
    queue: queue!,
    from: from as JobState,
    to: to as JobState,
    attempt: Number(attempt),
  };
  if (workerId) transition.workerId = workerId;
  if (startedAt) transition.startedAt = Number(startedAt);
  return transition;
}
