import { pause } from '../../lib/pause';
import { ClientError, Status } from 'nice-grpc';
import type { JobError } from '../../gen/ojs/server/v1/job';
import { WorkerState, type BeatRequest, type Delivery } from '../../gen/ojs/server/v1/worker_service';
import { RequestStream, StreamReader } from '../support/streams';
import type { ReplicaSet, Replica } from './replica-set';

/** Longest any single call may take before the worker gives up on it (nothing should come close). */
const CALL_TIMEOUT_MS = 5_000;
/** What the worker answers for a delivery: its result, or a failure. The same answer every time it is asked. */
export type HandlerOutcome = { ok: true; result?: unknown } | { ok: false; error: Partial<JobError> & { type: string } };

/** Pause before reconnecting, so that a worker does not spin while every replica is unavailable. */
const RECONNECT_PAUSE_MS = 50;

/**
 * A worker that survives replicas dying under it, as a real one must: it
 * works through one live replica at a time (Fetch, Beat, AckBatch), and
 * when a call or stream to it fails it reconnects to another. Jobs it
 * received but could not settle are listed in its beats and acknowledged
 * again after reconnecting; a refusal then means the job was settled already
 * or taken back by the server, which delivers it again. It registers again
 * if it was declared dead meanwhile.
 */
export class ResilientWorker {
  /** Jobs the worker received and has not yet had a final answer for. */
  private readonly held = new Map<string, Delivery>();
  /** The handler's answer for each held delivery, by job id and lease token (given again after reconnecting). */
  private readonly outcomes = new Map<string, HandlerOutcome>();
  private sequence = 0;
  private isStopped = false;
  private current: AbortController | undefined;
  private readonly running: Promise<void>;
  /** Answers (acks and failures) the server confirmed. */
  acks = 0;
  /** Why sessions ended, by gRPC status (or error name): a replica or Redis went away, or the worker was declared dead. */
  readonly endings = new Map<string, number>();

  constructor(
    private readonly set: ReplicaSet,
    readonly workerId: string,
    private readonly queue: string,
    private readonly concurrency: number,
    /** Called after every confirmed ack (drives the test's progress). */
    private readonly onAck: () => void,
    /** What each delivery's handler answers (every delivery it receives passes here); an ack without result by default. */
    private readonly handle: (delivery: Delivery) => HandlerOutcome = () => ({ ok: true }),
  ) {
    this.running = this.run();
  }

  /** Stops after the current session and waits for the loop to end. */
  async stop(): Promise<void> {
    this.isStopped = true;
    this.current?.abort();
    await this.running;
  }

  private async run(): Promise<void> {
    let turn = 0;
    while (!this.isStopped) {
      const live = this.set.live();
      const replica = live[turn++ % Math.max(1, live.length)];
      if (replica !== undefined) {
        try {
          await this.session(replica);
        } catch (error) {
          // The replica died, Redis is away, or the worker was declared dead: reconnect.
          this.endings.set(endingOf(error), (this.endings.get(endingOf(error)) ?? 0) + 1);
        }
      }
      if (!this.isStopped) await pause(RECONNECT_PAUSE_MS);
    }
  }

  /** One connection to one replica, until something fails. */
  private async session(replica: Replica): Promise<void> {
    const abort = new AbortController();
    this.current = abort;
    const signal = abort.signal;
    const { workers } = replica.clients;
    let beatTimer: NodeJS.Timeout | undefined;
    try {
      await this.register(replica, signal);
      // Answers lost with the previous replica are given again first.
      await this.ack(replica, [...this.held.values()], signal);

      const requests = new RequestStream<BeatRequest>();
      const beats = new StreamReader(workers.beat(requests.queue, { signal }), abort);
      const beat = (): void =>
        requests.send({
          workerId: this.workerId,
          state: WorkerState.WORKER_STATE_RUNNING,
          activeJobs: this.held.size,
          activeJobIds: [...this.held.keys()],
          sequence: ++this.sequence,
        });
      beat();
      beatTimer = setInterval(beat, 200);
      const fetch = new StreamReader(workers.fetch({ workerId: this.workerId, queues: [this.queue] }, { signal }), abort);
      // Either stream failing ends the session; replies and pushes need no handling here.
      const beatsEnded = (async () => {
        for (;;) await beats.next();
      })();
      const deliveriesEnded = (async () => {
        for (;;) {
          const { deliveries } = await fetch.next();
          for (const delivery of deliveries) {
            this.held.set(delivery.job!.id, delivery);
            this.outcomes.set(deliveryKey(delivery), this.handle(delivery));
          }
          await this.ack(replica, deliveries, signal);
        }
      })();
      await Promise.race([beatsEnded, deliveriesEnded]);
    } finally {
      clearInterval(beatTimer);
      abort.abort();
    }
  }

  private async register(replica: Replica, signal: AbortSignal): Promise<void> {
    try {
      await replica.clients.workers.register(
        {
          workerId: this.workerId,
          hostname: 'crash-test',
          pid: process.pid,
          queues: [this.queue],
          concurrency: this.concurrency,
          labels: [],
        },
        { signal: AbortSignal.any([signal, AbortSignal.timeout(CALL_TIMEOUT_MS)]) },
      );
    } catch (error) {
      // Still registered from an earlier session: carry on with it.
      if (!(error instanceof ClientError && error.code === Status.ALREADY_EXISTS)) throw error;
    }
  }

  /**
   * Answers deliveries as the handler decided (AckBatch for results,
   * FailBatch for failures); those settled or refused are no longer held (a
   * refusal is final).
   */
  private async ack(replica: Replica, deliveries: readonly Delivery[], signal: AbortSignal): Promise<void> {
    const options = { signal: AbortSignal.any([signal, AbortSignal.timeout(CALL_TIMEOUT_MS)]) };
    const outcomeOf = (d: Delivery): HandlerOutcome => this.outcomes.get(deliveryKey(d)) ?? { ok: true };
    const succeeded = deliveries.filter((d) => outcomeOf(d).ok);
    const failed = deliveries.filter((d) => !outcomeOf(d).ok);
    const answered: { delivery: Delivery; ok: boolean }[] = [];
    if (succeeded.length > 0) {
      const completions = succeeded.map((d) => {
        const outcome = outcomeOf(d);
        return { jobId: d.job!.id, leaseToken: d.leaseToken, result: outcome.ok ? outcome.result : undefined };
      });
      const { results } = await replica.clients.workers.ackBatch({ workerId: this.workerId, completions }, options);
      results.forEach((result, i) => answered.push({ delivery: succeeded[i]!, ok: result.ok }));
    }
    if (failed.length > 0) {
      const failures = failed.map((d) => {
        const outcome = outcomeOf(d);
        const error = outcome.ok ? { type: 'unexpected' } : outcome.error;
        return { jobId: d.job!.id, leaseToken: d.leaseToken, error: { message: '', backtrace: [], ...error } };
      });
      const { results } = await replica.clients.workers.failBatch({ workerId: this.workerId, failures }, options);
      results.forEach((result, i) => answered.push({ delivery: failed[i]!, ok: result.ok }));
    }
    for (const { delivery, ok } of answered) {
      const jobId = delivery.job!.id;
      // Only this lease's answer is final; a newer delivery of the same job may be held meanwhile.
      if (this.held.get(jobId)?.leaseToken === delivery.leaseToken) this.held.delete(jobId);
      this.outcomes.delete(deliveryKey(delivery));
      if (ok) {
        this.acks += 1;
        this.onAck();
      }
    }
  }
}

/** A delivery's key: a lease token is the attempt's, shared by the jobs of one claim. */
function deliveryKey(delivery: Delivery): string {
  return `${delivery.job!.id} ${delivery.leaseToken}`;
}

/** A session's end as a word: the gRPC status, "ended" for a stream the server closed, or the error's name. */
function endingOf(error: unknown): string {
  if (error instanceof ClientError) return Status[error.code];
  if (error instanceof Error) return error.message === 'stream ended' ? 'ended' : error.name;
  return String(error);
}
