import { assertField, invalidRequest, OjsError, quote, workerNotFound } from '../domain/errors';
import { workerIdProblem } from '../domain/identifiers';
import type { Job } from '../domain/job';
import { DELIVERY_BUDGET_BYTES, MAX_FETCH_WAIT_MS, MAX_QUEUES_PER_WORKER } from '../domain/limits';
import { transitionOf } from '../domain/transition';
import type { Principal } from '../domain/principal';
import { desiredState, isOwnedBy, type WorkerState } from '../domain/worker';
import type { ClaimResult } from '../store/job-store';
import type { StoreSignal } from '../store/store-signal';
import { performance } from 'node:perf_hooks';
import type { AppContext } from './app-context';
import { assertMayUseQueue } from './caller-scope';
import { FetchSession, type FetchEndReason } from './fetch-session';

/** Most jobs delivered in one Fetch message. */
const MAX_DELIVERY_BATCH = 500;

/** What an open Beat stream is told between beats. */
export interface BeatListener {
  directed(state: WorkerState): void;
  cancelled(jobIds: string[]): void;
  /** The execution (or total) timeout of held jobs passed: stop them. */
  timedOut(jobIds: string[]): void;
  /** Held jobs were taken back: stop them, answer nothing. */
  reclaimed(jobIds: string[]): void;
  /** The worker was deregistered or declared dead. */
  removed(): void;
}

/**
 * The live streams of the workers connected to this replica. Store signals
 * (from this replica or, with a shared store, from any) are routed here:
 * new jobs wake Fetch streams with free capacity, settled jobs wake their
 * worker's stream, directives and cancellations are pushed on Beat streams
 * at once, and so are timeouts. Jobs are only ever claimed for a worker with a live Fetch stream.
 */
export class WorkerStreams {
  private readonly sessions = new Map<string, FetchSession>();
  private readonly sessionsByQueue = new Map<string, FetchSession[]>();
  private readonly cursors = new Map<string, number>();
  private readonly beatListeners = new Map<string, Set<BeatListener>>();
  /** Per queue held back by its rate window, the one wake-up set for when the window reopens. */
  private readonly rateWakeups = new Map<string, { at: number; cancel: () => void }>();
  private readonly unsubscribe: () => void;
  /** Per queue with streams here, how many jobsAvailable signals it had (see isDrained). */
  private readonly announcements = new Map<string, number>();
  /** Per queue a claim found empty, its announcement count when that claim began (see isDrained). */
  private readonly drainedAt = new Map<string, number>();
  /** When each queue's streams last claimed as a safety net (performance.now(), see keepalive). */
  private readonly refreshedAt = new Map<string, number>();
  /** Set by endAll: a stream still opening when everything ended must end too, not outlive the shutdown. */
  private endedFor: FetchEndReason | undefined;

  constructor(private readonly ctx: AppContext) {
    this.unsubscribe = ctx.store.subscribe((signal) => this.route(signal));
  }

  /**
   * Opens the Fetch stream of the caller's running worker (another's is
   * NOT_FOUND, as an unknown id is), for queues the caller may still use. A
   * second stream of the same worker replaces the first (a reconnect whose
   * old stream is not yet dead).
   */
  async openFetch(caller: Principal, workerId: string, queues: readonly string[], maxWaitMs: number): Promise<FetchSession> {
    assertField('worker_id', workerIdProblem(workerId));
    if (queues.length > MAX_QUEUES_PER_WORKER) throw invalidRequest('queues', `must list at most ${MAX_QUEUES_PER_WORKER} queues`);
    if (!Number.isInteger(maxWaitMs) || maxWaitMs < 0 || maxWaitMs > MAX_FETCH_WAIT_MS) {
      throw invalidRequest('max_wait', `must be from 0 (no limit) to ${MAX_FETCH_WAIT_MS / 3_600_000} hours`);
    }
    const snapshot = await this.ctx.store.getWorker(workerId);
    if (snapshot === undefined || !isOwnedBy(snapshot.worker, caller)) throw workerNotFound(workerId);
    const { worker } = snapshot;
    const state = desiredState(worker);
    if (state !== 'running') {
      throw new OjsError('invalid_state', `worker ${quote(workerId)} is ${state}; only a running worker may fetch`, {
        metadata: { worker_id: quote(workerId), state },
      });
    }
    queues.forEach((queue, i) => {
      if (!worker.queues.includes(queue))
        throw invalidRequest(`queues[${i}]`, `"${quote(queue)}" is not one of the worker's registered queues`);
    });
    const session = new FetchSession(workerId, queues.length > 0 ? queues : worker.queues);
    // The caller's queues may have shrunk since it registered the worker (its tokens were reloaded).
    session.queues.forEach((queue, i) => assertMayUseQueue(caller, `queues[${i}]`, queue));
    this.sessions.get(workerId)?.end('replaced');
    this.sessions.set(workerId, session);
    // Changed in place, here and in close(): thousands of streams on one queue would make a copy per stream
    // opened or closed a quadratic amount of garbage.
    for (const queue of session.queues) {
      const sessions = this.sessionsByQueue.get(queue);
      if (sessions === undefined) this.sessionsByQueue.set(queue, [session]);
      else sessions.push(session);
    }
    if (this.endedFor !== undefined) session.end(this.endedFor);
    return session;
  }

  /**
   * Claims batches of jobs (never empty) for the session and hands each to
   * `send`, until the session ends. The next claim waits for `send` to
   * settle, so a slow stream is never handed more than it can write.
   */
  async deliver(session: FetchSession, send: (jobs: Job[]) => Promise<void>): Promise<void> {
    try {
      while ((await session.next()) === 'claim') {
        if (session.freeCapacity > 0 && !(await this.claimAndSend(session, send))) return;
      }
    } finally {
      this.close(session);
    }
  }

  /**
   * Claims for the session and sends what the claim took; false once the
   * session has ended. A function of its own, not part of deliver()'s
   * loop: a loop's frame (an async generator's as much) keeps the last
   * batch it handled for as long as it waits for the next wake, seconds
   * for an idle worker, long enough for the jobs to be promoted to the old
   * generation; at 10,000 workers that filled it with jobs already
   * delivered.
   */
  private async claimAndSend(session: FetchSession, send: (jobs: Job[]) => Promise<void>): Promise<boolean> {
    const result = await this.claim(session);
    if (!result.isRunning) {
      session.end('not_running');
      return false;
    }
    if (result.jobs.length === 0) return true;
    if (session.endReason !== undefined) {
      await this.releaseUndelivered(session, result.jobs);
      return false;
    }
    await send(result.jobs);
    return true;
  }

  /** Subscribes a Beat stream to pushes for its worker; returns the unsubscribe. */
  attachBeat(workerId: string, listener: BeatListener): () => void {
    let listeners = this.beatListeners.get(workerId);
    if (listeners === undefined) {
      listeners = new Set();
      this.beatListeners.set(workerId, listeners);
    }
    listeners.add(listener);
    return () => {
      listeners.delete(listener);
      if (listeners.size === 0 && this.beatListeners.get(workerId) === listeners) this.beatListeners.delete(workerId);
    };
  }

  /**
   * A keepalive of `session` is due (its stream sent nothing for a
   * keepalive interval, and sends the keepalive itself). Signals can be
   * lost (a replica cut off from the store's notifications, a capacityFreed
   * that never came), so the first keepalive of a queue's streams in each
   * interval also claims for that queue, forgetting its capacity estimate:
   * a job nobody announced waits about one interval. Once per queue, not
   * once per stream: a replica with thousands of idle workers would
   * otherwise call the store for each of them every interval (at 10,000
   * workers and 15 s, 667 claims a second for nothing). A full worker woken
   * so passes the claim on.
   */
  keepalive(session: FetchSession): void {
    const now = performance.now();
    const interval = this.ctx.settings.streamKeepaliveMs;
    const due = session.queues.filter((queue) => now - (this.refreshedAt.get(queue) ?? Number.NEGATIVE_INFINITY) >= interval);
    for (const queue of due) {
      this.refreshedAt.set(queue, now);
      session.wokenFor.add(queue);
    }
    if (due.length > 0) session.refresh();
  }

  /** Ends every Fetch stream (server shutdown); Beat streams are ended by the transport. */
  endAll(reason: FetchEndReason): void {
    this.endedFor = reason;
    for (const session of this.sessions.values()) session.end(reason);
  }

  stop(): void {
    this.unsubscribe();
    for (const wakeup of this.rateWakeups.values()) wakeup.cancel();
    this.rateWakeups.clear();
  }

  private async claim(session: FetchSession): Promise<ClaimResult> {
    const { ctx } = this;
    const wokenFor = [...session.wokenFor];
    session.wokenFor.clear();
    const announcedBefore = session.queues.map((queue) => this.announcements.get(queue) ?? 0);
    const result = await ctx.store.claim({
      workerId: session.workerId,
      queues: session.queues,
      max: Math.min(session.freeCapacity, MAX_DELIVERY_BATCH),
      now: ctx.clock.now(),
      leaseNonce: ctx.entropy.newLeaseNonce(),
      confirmWithinMs: ctx.settings.heartbeatTimeoutMs,
      maxBytes: DELIVERY_BUDGET_BYTES,
    });
    session.freeCapacity = result.freeCapacity;
    for (const queue of result.drainedQueues) {
      const before = announcedBefore[session.queues.indexOf(queue)];
      // A job announced while the claim ran may have come after it looked.
      if (before !== undefined && before === (this.announcements.get(queue) ?? 0)) this.drainedAt.set(queue, before);
    }
    if (result.jobs.length > 0) ctx.telemetry.jobTransitions(result.jobs.map((job) => transitionOf(job, 'available', job.startedAt!)));
    // A full worker cannot take the jobs it was woken for: wake another one.
    if (result.freeCapacity === 0) for (const queue of wokenFor) this.wakeQueue(queue, 1, session);
    // The claim stopped at its byte budget, not for want of jobs: the next one takes more.
    if (result.isBudgetSpent && result.freeCapacity > 0) session.wake();
    for (const { queue, opensAt } of result.heldBackByRate) this.wakeWhenWindowOpens(queue, opensAt);
    return result;
  }

  /**
   * Jobs of `queue` wait for its rate window, which no signal announces:
   * one wake-up per queue (the earliest asked for), on the clock, wakes a
   * stream of the queue then. If another replica's stream takes the slot
   * first, the woken claim is held back again and asks for the next one.
   */
  private wakeWhenWindowOpens(queue: string, opensAt: number): void {
    const scheduled = this.rateWakeups.get(queue);
    if (scheduled !== undefined && scheduled.at <= opensAt) return;
    scheduled?.cancel();
    const cancel = this.ctx.clock.at(opensAt, () => {
      this.rateWakeups.delete(queue);
      this.wakeQueue(queue, 1);
    });
    this.rateWakeups.set(queue, { at: opensAt, cancel });
  }

  private async releaseUndelivered(session: FetchSession, jobs: readonly Job[]): Promise<void> {
    const leases = jobs.map((job) => ({ jobId: job.id, leaseToken: job.lease!.token }));
    const transitions = await this.ctx.store.releaseUndelivered({ leases, now: this.ctx.clock.now(), requireUnconfirmedLapse: false });
    this.ctx.telemetry.jobTransitions(transitions);
    this.ctx.logger.debug({ workerId: session.workerId, jobIds: leases.map((l) => l.jobId) }, 'released jobs claimed for a closed stream');
  }

  private close(session: FetchSession): void {
    session.end('client_cancelled');
    if (this.sessions.get(session.workerId) === session) this.sessions.delete(session.workerId);
    for (const queue of session.queues) {
      const sessions = this.sessionsByQueue.get(queue);
      const index = sessions?.indexOf(session) ?? -1;
      if (index >= 0) sessions!.splice(index, 1);
      if (sessions?.length === 0) {
        this.sessionsByQueue.delete(queue);
        this.cursors.delete(queue);
        this.refreshedAt.delete(queue);
        this.announcements.delete(queue);
        this.drainedAt.delete(queue);
      }
    }
  }

  private route(signal: StoreSignal): void {
    switch (signal.kind) {
      case 'jobsAvailable':
        if (this.sessionsByQueue.has(signal.queue)) this.announcements.set(signal.queue, (this.announcements.get(signal.queue) ?? 0) + 1);
        this.wakeQueue(signal.queue, signal.count);
        return;
      case 'capacityFreed': {
        const session = this.sessions.get(signal.workerId);
        if (session === undefined) return;
        session.freeCapacity += signal.count;
        // A worker that settles its jobs as fast as they come would otherwise claim once more after each, for nothing.
        if (session.queues.every((queue) => this.isDrained(queue))) return;
        session.wake();
        return;
      }
      case 'workerDirected':
        if (signal.state !== 'running') this.sessions.get(signal.workerId)?.end('not_running');
        for (const listener of this.listenersOf(signal.workerId)) listener.directed(signal.state);
        return;
      case 'jobsCancelled':
        for (const listener of this.listenersOf(signal.workerId)) listener.cancelled(signal.jobIds);
        return;
      case 'jobsTimedOut':
        for (const listener of this.listenersOf(signal.workerId)) listener.timedOut(signal.jobIds);
        return;
      case 'jobsReclaimed':
        for (const listener of this.listenersOf(signal.workerId)) listener.reclaimed(signal.jobIds);
        return;
      case 'workerRemoved':
        this.sessions.get(signal.workerId)?.end('worker_removed');
        for (const listener of this.listenersOf(signal.workerId)) listener.removed();
        return;
      case 'availability':
        if (signal.isAvailable) this.lookAgain();
        return;
      case 'dueAt':
      case 'scheduleDueAt':
        // For the background passes (Recovery.watchDue, Schedules.watchTicks); a job they make available is announced by itself.
        return;
    }
  }

  /**
   * Signals may have been lost while the store was away: every stream
   * forgets what it believed of its worker's free capacity, and one stream
   * per queue claims, a full one waking the next (claim()), so jobs nobody
   * announced are found. Waking every stream would send a store that just
   * came back one claim per worker at once: thousands on a busy replica,
   * enough to make its next probe time out and the store look away again.
   */
  private lookAgain(): void {
    this.drainedAt.clear();
    for (const session of this.sessions.values()) session.forgetCapacity();
    for (const queue of this.sessionsByQueue.keys()) this.wakeQueue(queue, 1);
  }

  /**
   * Whether a claim found `queue` empty and no job was announced there
   * since it began: the jobs of a queue become ready only with a
   * jobsAvailable signal, so a claim would find nothing. Signals can be
   * lost; the keepalive's safety-net claim (keepalive) does not ask this.
   */
  private isDrained(queue: string): boolean {
    const at = this.drainedAt.get(queue);
    return at !== undefined && at === (this.announcements.get(queue) ?? 0);
  }

  /**
   * Wakes sessions of `queue` with free capacity, round-robin, until their
   * estimated capacity covers `count` jobs.
   */
  private wakeQueue(queue: string, count: number, except?: FetchSession): void {
    const sessions = this.sessionsByQueue.get(queue);
    if (sessions === undefined) return;
    const start = this.cursors.get(queue) ?? 0;
    let remaining = count;
    for (let i = 0; i < sessions.length && remaining > 0; i++) {
      const index = (start + i) % sessions.length;
      const session = sessions[index]!;
      if (session === except || session.freeCapacity <= 0) continue;
      session.wokenFor.add(queue);
      session.wake();
      remaining -= session.freeCapacity;
      this.cursors.set(queue, index + 1);
    }
  }

  private listenersOf(workerId: string): BeatListener[] {
    return [...(this.beatListeners.get(workerId) ?? [])];
  }
}
