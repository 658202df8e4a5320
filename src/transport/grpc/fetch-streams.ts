import type { handleServerStreamingCall } from '@grpc/grpc-js';
import type { Application } from '../../app/application';
import type { Job } from '../../domain/job';
import { DELIVERY_BUDGET_BYTES } from '../../domain/limits';
import { WorkerServiceDefinition, type FetchRequest, type FetchResponse } from '../../../gen/ojs/server/v1/worker_service';
import { decoded, gatedMethod, type CallGate } from './call-gate';
import { DirectCall } from './direct-call';
import { serializeComplete } from './encoded-messages';
import { FramedFetchResponseType, frameDeliveries } from './fetch-framing';
import type { UndecodableRequest } from './guarded-decoding';
import type { DirectMethod } from './service-host';
import { shuttingDown } from './shutting-down';
import { fromDuration } from './time-mapping';

const FETCH = gatedMethod(WorkerServiceDefinition, WorkerServiceDefinition.methods.fetch);

/**
 * The Fetch streams of WorkerService, served on grpc-js directly (a replica
 * holds one per worker; service-host.ts): each delivers the jobs claimed
 * for its worker, and a keepalive after an interval with nothing sent. A
 * stream waits for the client to take what was written before it claims
 * again. Server shutdown ends them through the application's streams
 * (WorkerStreams.endAll), with UNAVAILABLE.
 */
export class FetchStreams {
  constructor(
    private readonly app: Application,
    private readonly gate: CallGate,
  ) {}

  /** Fetch as the service host serves it. */
  readonly method: DirectMethod = {
    handler: (call: Parameters<handleServerStreamingCall<FetchRequest | UndecodableRequest, FetchResponse>>[0]) => this.handle(call),
    serializeResponse: (message: FetchResponse) => serializeComplete(FramedFetchResponseType, message),
  };

  private readonly handle: handleServerStreamingCall<FetchRequest | UndecodableRequest, FetchResponse> = (call) => {
    const stream = DirectCall.open(this.gate, FETCH, call, call.request);
    if (stream === undefined) return;
    // Admitted, the request is one that decoded: decoded() only narrows its type here.
    this.serve(stream, decoded(call.request)).then(
      () => stream.end(),
      (error: unknown) => stream.fail(error),
    );
  };

  private async serve(stream: DirectCall<FetchRequest | UndecodableRequest, FetchResponse>, request: FetchRequest): Promise<void> {
    const maxWaitMs = fromDuration(request.maxWait) ?? 0;
    const session = await this.app.streams.openFetch(stream.principal, request.workerId, request.queues, maxWaitMs);
    stream.onEnd(() => session.end('client_cancelled'));
    // Set while the stream waits for the client to read what was written: a keepalive would only add to it.
    let isFull = false;
    // A keepalive goes only after an interval with nothing sent: every message restarts the countdown. It is
    // written here, the delivery loop left asleep: waking it for each would make garbage that outlives the young
    // generation (the loop's waits last an interval), 667 times a second for 10,000 idle workers.
    const keepalive = setInterval(() => {
      this.app.streams.keepalive(session);
      if (isFull) return;
      isFull = !stream.write({ deliveries: [], serverTime: new Date(this.app.context.clock.now()) });
      if (isFull) void stream.drained().then(() => (isFull = false));
    }, this.app.context.settings.streamKeepaliveMs);
    const maxWait = maxWaitMs > 0 ? setTimeout(() => session.end('max_wait'), maxWaitMs) : undefined;
    try {
      await this.app.streams.deliver(session, async (jobs) => {
        isFull = this.write(stream, jobs);
        if (isFull) await stream.drained();
        isFull = false;
        keepalive.refresh();
      });
      if (session.endReason === 'server_shutdown') throw shuttingDown();
    } finally {
      clearInterval(keepalive);
      clearTimeout(maxWait);
    }
  }

  /** Writes the deliveries of `jobs`; true if the stream is full (the client has yet to read them). */
  private write(stream: DirectCall<FetchRequest | UndecodableRequest, FetchResponse>, jobs: readonly Job[]): boolean {
    const serverTime = new Date(this.app.context.clock.now());
    let isFull = false;
    for (const message of frameDeliveries(jobs, serverTime, DELIVERY_BUDGET_BYTES)) isFull = !stream.write(message);
    return isFull;
  }
}
