import { hostname } from 'node:os';
import { ClientError, Status } from 'nice-grpc';
import { WorkerState, type Delivery, type WorkerServiceClient } from '../packages/sdk/gen/ojs/server/v1/worker_service';
import { BeatLoop } from '../packages/sdk/src/beat-loop';
import { FetchLoop } from '../packages/sdk/src/fetch-loop';
import type { Logger } from '../packages/sdk/src';
import type { WorkerStreamClient } from '../packages/sdk/src/worker-stream-client';
import { call, cleanUp } from './deadline';

export interface ProtocolWorkerOptions {
  client: WorkerServiceClient;
  /** The Beat and Fetch streams' client, on the same connection as `client`. */
  streams: WorkerStreamClient;
  workerId: string;
  queues: string[];
  concurrency: number;
  /** Every delivery as it arrives; the same job may come again after its lease was lost. */
  onDelivery: (delivery: Delivery, worker: ProtocolWorker) => void;
  /** Deadline of each call (Register, Ack, Deregister). */
  waitMs: number;
  logger: Logger;
}

/** Refusals of a settlement: the job is no longer this lease's (reclaimed, or the worker was declared dead). */
const REFUSED = new Set([Status.FAILED_PRECONDITION, Status.NOT_FOUND]);

/**
 * A worker written against the protocol itself, to measure the server
 * without the SDK worker's runner and coalesced acks: it registers, opens a
 * Fetch stream and hands every delivery to `onDelivery`, and acknowledges
 * with single Ack calls. It lives like a real worker all the same: its
 * Beat stream beats at the interval the server announced, reporting the
 * jobs it holds, and both streams are opened again when they break (the
 * SDK's own BeatLoop and FetchLoop, not a second copy of them), so the
 * server never declares it dead however long a phase runs. A refused Ack
 * (the lease was lost meanwhile) is counted, not thrown.
 */
export class ProtocolWorker {
  /** Acks the server refused because the job was no longer this lease's. */
  refusedAcks = 0;
  /** Times the server no longer knew the worker (it declared it dead) and it registered again. */
  reRegistrations = 0;
  /** Answers to beats: the Beat stream is alive. */
  beatAnswers = 0;
  /** Jobs delivered and not yet settled, reported on every beat. */
  private readonly held = new Set<string>();
  private heartbeatIntervalMs = 5_000;
  private registering: Promise<void> | undefined;
  private readonly beats: BeatLoop;
  private readonly fetches: FetchLoop;
  private isStopping = false;

  private constructor(private readonly options: ProtocolWorkerOptions) {
    const { streams, workerId, logger } = options;
    const onWorkerUnknown = (): Promise<void> => this.registerAgain();
    this.beats = new BeatLoop({
      streams,
      workerId,
      logger,
      intervalMs: () => this.heartbeatIntervalMs,
      report: () => ({ state: WorkerState.WORKER_STATE_RUNNING, activeJobIds: [...this.held] }),
      onMessage: () => this.beatAnswers++,
      onWorkerUnknown,
    });
    this.fetches = new FetchLoop({
      streams,
      workerId,
      logger,
      wantsJobs: () => !this.isStopping,
      onDeliveries: (deliveries) => {
        for (const delivery of deliveries) {
          this.held.add(delivery.job!.id);
          options.onDelivery(delivery, this);
        }
      },
      onWorkerUnknown,
    });
  }

  /** Registers (within the deadline), then opens the Beat and Fetch streams. */
  static async start(options: ProtocolWorkerOptions): Promise<ProtocolWorker> {
    const worker = new ProtocolWorker(options);
    await worker.register();
    worker.beats.start();
    worker.fetches.start();
    return worker;
  }

  get workerId(): string {
    return this.options.workerId;
  }

  /** Acknowledges a delivery; resolves false when the server refused it (counted in `refusedAcks`). */
  async ack(delivery: Delivery): Promise<boolean> {
    const { client, workerId, waitMs } = this.options;
    const jobId = delivery.job!.id;
    try {
      await call(`the Ack of job ${jobId}`, waitMs, (signal) =>
        client.ack({ workerId, jobId, leaseToken: delivery.leaseToken, result: undefined }, { signal }),
      );
      return true;
    } catch (error) {
      if (!(error instanceof ClientError) || !REFUSED.has(error.code)) throw error;
      this.refusedAcks += 1;
      return false;
    } finally {
      this.held.delete(jobId);
    }
  }

  /** Closes both streams and deregisters, each within the deadline. */
  async stop(): Promise<void> {
    this.isStopping = true;
    const { client, workerId, waitMs } = this.options;
    await cleanUp(`worker ${workerId}'s Fetch stream to close`, waitMs, this.fetches.stop());
    await cleanUp(`worker ${workerId}'s Beat stream to close`, waitMs, this.beats.stop());
    await cleanUp(
      `the Deregister of worker ${workerId}`,
      waitMs,
      call(`the Deregister of worker ${workerId}`, waitMs, (signal) => client.deregister({ workerId }, { signal })),
    );
  }

  private async register(): Promise<void> {
    const { client, workerId, queues, concurrency, waitMs } = this.options;
    const reply = await call(`the Register of worker ${workerId}`, waitMs, (signal) =>
      client.register(
        { workerId, hostname: hostname(), pid: process.pid, queues, concurrency, labels: [], startedAt: new Date() },
        { signal },
      ),
    );
    const interval = reply.heartbeatInterval;
    if (interval !== undefined) this.heartbeatIntervalMs = interval.seconds * 1_000 + Math.round(interval.nanos / 1e6);
  }

  /** The server forgot the worker (declared it dead): register again, once for both streams. */
  private registerAgain(): Promise<void> {
    this.registering ??= (async () => {
      try {
        this.reRegistrations += 1;
        await this.register();
      } catch (error) {
        this.options.logger.warn({ err: error }, 'could not register again');
      } finally {
        this.registering = undefined;
      }
    })();
    return this.registering;
  }
}
