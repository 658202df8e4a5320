import { randomUUID } from 'node:crypto';
import { Status, type Metadata } from 'nice-grpc';
import type { BeatRequest, BeatResponse, Delivery, FetchResponse } from '../../gen/ojs/server/v1/worker_service';
import { WorkerState } from '../../gen/ojs/server/v1/worker_service';
import { HandlerCode } from '../../gen/ojs/server/v1/job';
import type { Clients } from './test-server';
import { RequestStream, StreamReader } from './streams';

/** What a test may add to a stream's call: request metadata, and a listener for the response headers. */
export interface StreamCallOptions {
  metadata?: Metadata;
  onHeader?: (header: Metadata) => void;
}

export interface TestWorkerOptions {
  workerId?: string;
  queues?: string[];
  concurrency?: number;
  labels?: string[];
}

/**
 * A hand-written worker driving the protocol step by step, the way a test
 * needs it: register, open streams, read deliveries, settle.
 */
export class TestWorker {
  private sequence = 0;

  private constructor(
    readonly clients: Clients,
    readonly workerId: string,
  ) {}

  static async register(clients: Clients, options: TestWorkerOptions = {}): Promise<TestWorker> {
    const workerId = options.workerId ?? `worker-${randomUUID()}`;
    await clients.workers.register({
      workerId,
      hostname: 'test-host',
      pid: process.pid,
      queues: options.queues ?? ['default'],
      concurrency: options.concurrency ?? 10,
      labels: options.labels ?? [],
      startedAt: new Date(),
    });
    return new TestWorker(clients, workerId);
  }

  openFetch(request: { queues?: string[]; maxWaitMs?: number } = {}, options: StreamCallOptions = {}): StreamReader<FetchResponse> {
    const abort = new AbortController();
    const maxWait =
      request.maxWaitMs === undefined
        ? undefined
        : { seconds: Math.floor(request.maxWaitMs / 1000), nanos: (request.maxWaitMs % 1000) * 1e6 };
    const stream = this.clients.workers.fetch(
      { workerId: this.workerId, queues: request.queues ?? [], maxWait },
      { ...options, signal: abort.signal },
    );
    return new StreamReader(stream, abort);
  }

  openBeat(options: StreamCallOptions = {}): BeatStream {
    const requests = new RequestStream<BeatRequest>();
    const abort = new AbortController();
    const responses = this.clients.workers.beat(requests.queue, { ...options, signal: abort.signal });
    return new BeatStream(this, requests, new StreamReader(responses, abort));
  }

  nextSequence(): number {
    this.sequence += 1;
    return this.sequence;
  }

  ack(delivery: Delivery, result?: unknown) {
    return this.clients.workers.ack({ workerId: this.workerId, jobId: delivery.job!.id, leaseToken: delivery.leaseToken, result });
  }

  fail(delivery: Delivery, error: { type: string; message?: string; code?: HandlerCode }) {
    return this.clients.workers.fail({
      workerId: this.workerId,
      jobId: delivery.job!.id,
      leaseToken: delivery.leaseToken,
      error: { type: error.type, message: error.message ?? 'failed', code: error.code ?? HandlerCode.HANDLER_CODE_UNSPECIFIED },
    });
  }
}

/** The worker's side of a Beat stream. */
export class BeatStream {
  constructor(
    private readonly worker: TestWorker,
    private readonly requests: RequestStream<BeatRequest>,
    readonly responses: StreamReader<BeatResponse>,
  ) {}

  /** Sends a beat and returns its reply (skipping pushes that arrive first). */
  async beat(state: WorkerState = WorkerState.WORKER_STATE_RUNNING, activeJobIds: string[] = [], sequence?: number): Promise<BeatResponse> {
    const seq = sequence ?? this.worker.nextSequence();
    this.requests.send({ workerId: this.worker.workerId, state, activeJobs: activeJobIds.length, activeJobIds, sequence: seq });
    return this.responses.nextMatching((r) => r.inReplyTo === seq);
  }

  send(request: BeatRequest): void {
    this.requests.send(request);
  }

  end(): void {
    this.requests.end();
  }

  close(): void {
    this.responses.close();
  }
}

export { Status };
