import { ClientError, Status } from 'nice-grpc';
import type { Delivery } from '../gen/ojs/server/v1/worker_service';
import { Wakeup } from '../lib/wakeup';
import { pause } from '../lib/pause';
import { Backoff } from './backoff';
import type { Logger } from './logger';
import { CREDENTIALS_REFUSED, isCredentialRefusal } from './refusals';
import type { WorkerStreamClient } from './worker-stream-client';

export interface FetchLoopDeps {
  streams: WorkerStreamClient;
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
  /** Cancels the open stream, while one is. */
  private cancelOpen: (() => void) | undefined;
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
    this.cancelOpen?.();
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
      let received = false;
      let isCancelled = false;
      const call = this.deps.streams.fetch({ workerId: this.deps.workerId, queues: [], maxWait: undefined }, (response) => {
        received = true;
        backoff.reset();
        if (response.deliveries.length > 0) this.deps.onDeliveries(response.deliveries);
      });
      const cancel = (): void => {
        isCancelled = true;
        call.cancel();
      };
      this.cancelOpen = cancel;
      this.stopping.signal.addEventListener('abort', cancel);
      const end = await call.ended;
      this.cancelOpen = undefined;
      this.stopping.signal.removeEventListener('abort', cancel);
      if (this.stopping.signal.aborted || isCancelled) continue;
      // A clean end: the server saw the worker leave running (or replaced the stream).
      if (end === undefined && received) continue;
      const status = end instanceof ClientError ? end.code : undefined;
      if (status === Status.NOT_FOUND) await this.deps.onWorkerUnknown();
      else if (isCredentialRefusal(end)) this.deps.logger.error({ err: end }, CREDENTIALS_REFUSED);
      else if (end !== undefined && status !== Status.FAILED_PRECONDITION)
        this.deps.logger.warn({ err: end }, 'fetch stream failed; reconnecting');
      await pause(backoff.next(), this.stopping.signal);
    }
  }
}
