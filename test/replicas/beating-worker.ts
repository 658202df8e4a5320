import { WorkerState, type Delivery, type FetchResponse, type SettlementResult } from '../../gen/ojs/server/v1/worker_service';
import type { StreamReader } from '../support/streams';
import type { Clients } from '../support/test-server';
import { TestWorker, type BeatStream } from '../support/test-worker';
import { errorText } from '../support/error-text';
import { Progress } from '../support/waiting';

/**
 * What the worker does with a delivery: complete it, fail it (error type
 * "Boom"), or hold it. A held job is listed in every beat, which confirms and
 * renews its lease; a forgotten one is held but never listed, as by a worker
 * that lost track of it.
 */
export type Decision = 'ack' | 'fail' | 'hold' | 'forget';

export interface BeatingWorkerOptions {
  queues: string[];
  concurrency?: number;
  decide?: (delivery: Delivery) => Decision;
  /** How often it beats; the replicas' heartbeat interval. */
  beatIntervalMs?: number;
  /** Told of every message; share one to wait on several workers at once. */
  progress?: Progress;
}

/**
 * A live worker on one replica: its Fetch stream settles each batch of
 * deliveries as `decide` says, and it beats every interval listing the
 * jobs it holds, as worker-protocol 4.2 asks, so that it is neither declared
 * dead nor loses unconfirmed deliveries while a test runs. `silence()` makes
 * it vanish the way a crashed worker does.
 */
export class BeatingWorker {
  /** Every delivery received, in order. */
  readonly deliveries: Delivery[] = [];
  readonly acked: Delivery[] = [];
  readonly failed: Delivery[] = [];
  /** Settlements the server refused (none are expected in these tests). */
  readonly refused: SettlementResult[] = [];
  readonly progress: Progress;
  private readonly held = new Map<string, { delivery: Delivery; listed: boolean }>();
  /** Jobs listed in a beat the server answered: their leases are confirmed. */
  private readonly confirmed = new Set<string>();
  /** The jobs each beat not yet answered listed, by sequence. */
  private readonly unanswered = new Map<number, string[]>();
  private readonly timer: NodeJS.Timeout;
  private isSilenced = false;
  /** Why a stream ended while the worker was not silenced. */
  private streamFailure: unknown;

  private constructor(
    readonly worker: TestWorker,
    private readonly fetch: StreamReader<FetchResponse>,
    private readonly beat: BeatStream,
    private readonly options: BeatingWorkerOptions,
  ) {
    this.progress = options.progress ?? new Progress();
    this.sendBeat();
    this.timer = setInterval(() => this.sendBeat(), options.beatIntervalMs ?? 200);
    void this.readDeliveries();
    void this.readBeatResponses();
  }

  static async start(clients: Clients, options: BeatingWorkerOptions): Promise<BeatingWorker> {
    const worker = await TestWorker.register(clients, { queues: options.queues, concurrency: options.concurrency ?? 100 });
    return new BeatingWorker(worker, worker.openFetch(), worker.openBeat(), options);
  }

  get workerId(): string {
    return this.worker.workerId;
  }

  /** Ids of the jobs held now. */
  heldJobIds(): string[] {
    return [...this.held.keys()];
  }

  /**
   * Ids of held jobs the server knows the worker has: listed in a beat it
   * answered. A delivery never confirmed is given back to the queue without
   * spending an attempt if the worker goes away (lease.ts claimLease).
   */
  confirmedJobIds(): string[] {
    return this.heldJobIds().filter((id) => this.confirmed.has(id));
  }

  /** Resolves once `check` holds, re-checked on every message; fails early if a stream broke. */
  until<T>(check: () => T | undefined | false, describe: () => string, timeoutMs = 10_000): Promise<T> {
    return this.progress.until(
      () => {
        if (this.streamFailure !== undefined) throw new Error(`worker ${this.workerId}: a stream failed: ${errorText(this.streamFailure)}`);
        return check();
      },
      describe,
      timeoutMs,
    );
  }

  /** Stops beating and closes both streams, as a worker process that died. */
  silence(): void {
    if (this.isSilenced) return;
    this.isSilenced = true;
    clearInterval(this.timer);
    this.fetch.close();
    this.beat.close();
  }

  private sendBeat(): void {
    const listed = [...this.held].filter(([, h]) => h.listed).map(([id]) => id);
    const sequence = this.worker.nextSequence();
    this.unanswered.set(sequence, listed);
    this.beat.send({
      workerId: this.workerId,
      state: WorkerState.WORKER_STATE_RUNNING,
      activeJobs: listed.length,
      activeJobIds: listed,
      sequence,
    });
  }

  private async readDeliveries(): Promise<void> {
    try {
      for (;;) {
        const { deliveries } = await this.fetch.next();
        if (deliveries.length === 0) continue;
        this.deliveries.push(...deliveries);
        await this.settle(deliveries);
        this.progress.changed();
      }
    } catch (error) {
      this.onStreamEnd(error);
    }
  }

  private async settle(deliveries: Delivery[]): Promise<void> {
    const decide = this.options.decide ?? (() => 'ack');
    const toAck: Delivery[] = [];
    const toFail: Delivery[] = [];
    for (const delivery of deliveries) {
      // Held (and listed in beats, like any job being worked on) until its settlement is answered.
      const decision = decide(delivery);
      this.held.set(delivery.job!.id, { delivery, listed: decision !== 'forget' });
      if (decision === 'ack') toAck.push(delivery);
      else if (decision === 'fail') toFail.push(delivery);
    }
    const { workers } = this.worker.clients;
    if (toAck.length > 0) {
      const completions = toAck.map((d) => ({ jobId: d.job!.id, leaseToken: d.leaseToken }));
      const { results } = await workers.ackBatch({ workerId: this.workerId, completions });
      this.record(results, toAck, this.acked);
    }
    if (toFail.length > 0) {
      const failures = toFail.map((d) => ({
        jobId: d.job!.id,
        leaseToken: d.leaseToken,
        error: { type: 'Boom', message: 'failed on purpose' },
      }));
      const { results } = await workers.failBatch({ workerId: this.workerId, failures });
      this.record(results, toFail, this.failed);
    }
  }

  private record(results: SettlementResult[], deliveries: Delivery[], settled: Delivery[]): void {
    results.forEach((result, i) => {
      this.held.delete(result.jobId);
      if (result.ok) settled.push(deliveries[i]!);
      else this.refused.push(result);
    });
  }

  private async readBeatResponses(): Promise<void> {
    try {
      for (;;) {
        const response = await this.beat.responses.next();
        for (const id of this.unanswered.get(response.inReplyTo) ?? []) this.confirmed.add(id);
        this.unanswered.delete(response.inReplyTo);
        this.progress.changed();
      }
    } catch (error) {
      this.onStreamEnd(error);
    }
  }

  private onStreamEnd(error: unknown): void {
    if (this.isSilenced) return;
    this.streamFailure = error;
    this.progress.changed();
  }
}
