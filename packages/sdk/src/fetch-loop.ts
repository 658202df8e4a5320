import { ClientError, Status } from 'nice-grpc';
import type { Delivery, WorkerServiceClient } from '../gen/ojs/server/v1/worker_service';
import { Wakeup } from '../lib/wakeup';
import { pause } from '../lib/pause';
import { Backoff } from './backoff';
import type { Logger } from './logger';
import { CREDENTIALS_REFUSED, isCredentialRefusal } from './refusals';

export interface FetchLoopDeps {
  client: WorkerServiceClient;
  workerId: string;
  logger: Logger;
  /** Whether the worker wants jobs now. */
  wantsJobs: () => boolean;
  onDeliveries: (deliveries: Delivery[]) => void;
  onWorkerUnknown: () => Promise<void>;
}

/**
 * The Fetch stream: open while the worker runs. The server sends jobs as
 * they come, never more than the worker's free capacity, and ends the
 * stream itself when the worker stops running (it hears that from the
 * worker's beat), so no delivery is ever lost in a stream the worker
 * cancelled. A broken stream is opened again with backoff.
 */
export class FetchLoop {
  private readonly stopping = new AbortController();
  private call: AbortController | undefined;
  private readonly wakeup = new Wakeup();
  private running: Promise<void> | undefined;

  constructor(private readonly deps: FetchLoopDeps) {}

  start(): void {
    this.running ??= this.run();
  }

  /** The worker's state changed: look again at whether to fetch. */
  poke(): void {
    this.wakeup.notify();
  }

  /** Cancels the open stream from this side: for when the server cannot be told to end it. */
  cancelStream(): void {
    this.call?.abort();
  }

  async stop(): Promise<void> {
    this.stopping.abort();
    this.poke();
    await this.running;
  }

  private async run(): Promise<void> {
    const backoff = new Backoff(100, 5_000);
    while (!this.stopping.signal.aborted) {
      if (!this.deps.wantsJobs()) {
        await this.wakeup.wait();
        continue;
      }
      const call = new AbortController();
      const abortCall = (): void => call.abort();
      this.stopping.signal.addEventListener('abort', abortCall);
      this.call = call;
      let received = false;
      try {
        for await (const response of this.deps.client.fetch(
          { workerId: this.deps.workerId, queues: [], maxWait: undefined },
          { signal: call.signal },
        )) {
          received = true;
          backoff.reset();
          if (response.deliveries.length > 0) this.deps.onDeliveries(response.deliveries);
        }
        // A clean end: the server saw the worker leave running (or replaced the stream).
        if (received) continue;
      } catch (error) {
        if (this.stopping.signal.aborted || call.signal.aborted) continue;
        const status = error instanceof ClientError ? error.code : undefined;
        if (status === Status.NOT_FOUND) await this.deps.onWorkerUnknown();
        else if (isCredentialRefusal(error)) this.deps.logger.error({ err: error }, CREDENTIALS_REFUSED);
        else if (status !== Status.FAILED_PRECONDITION) this.deps.logger.warn({ err: error }, 'fetch stream failed; reconnecting');
      } finally {
        this.call = undefined;
        this.stopping.signal.removeEventListener('abort', abortCall);
      }
      await pause(backoff.next(), this.stopping.signal);
    }
  }
}
