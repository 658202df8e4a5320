import { Wakeup } from '../../lib/wakeup';

/** Why a Fetch stream ended. `server_shutdown` ends it with UNAVAILABLE; the rest end it cleanly. */
export type FetchEndReason = 'client_cancelled' | 'max_wait' | 'not_running' | 'worker_removed' | 'replaced' | 'server_shutdown';

/** What the delivery loop should do next. */
export type FetchStep = 'claim' | 'end';

/**
 * One open Fetch stream of one worker. It holds no jobs. It records whether
 * there may be work for the worker (a wake) and an estimate of the worker's
 * free capacity, so that the delivery loop calls the store only when a
 * claim can succeed, and never polls. Keepalives are the stream's own: they
 * do not wake the loop.
 */
export class FetchSession {
  /** Refreshed from the store by every claim; raised by capacityFreed signals. */
  freeCapacity = Number.POSITIVE_INFINITY;
  /** Queues whose jobsAvailable signal woke this session since its last claim. */
  readonly wokenFor = new Set<string>();
  private isWoken = true;
  private ended: FetchEndReason | undefined;
  private readonly wakeup = new Wakeup();

  constructor(
    readonly workerId: string,
    readonly queues: readonly string[],
  ) {}

  get endReason(): FetchEndReason | undefined {
    return this.ended;
  }

  /** There may be jobs for this worker: claim at the next step. */
  wake(): void {
    this.isWoken = true;
    this.wakeup.notify();
  }

  /** Forgets the capacity estimate and claims once: for when signals may have been missed. */
  refresh(): void {
    this.forgetCapacity();
    this.wake();
  }

  /** Forgets the capacity estimate (a capacityFreed signal may have been missed); the next wake claims. */
  forgetCapacity(): void {
    this.freeCapacity = Number.POSITIVE_INFINITY;
  }

  end(reason: FetchEndReason): void {
    if (this.ended !== undefined) return;
    this.ended = reason;
    this.wakeup.notify();
  }

  /** Waits until there is something to do. */
  async next(): Promise<FetchStep> {
    for (;;) {
      if (this.ended !== undefined) return 'end';
      if (this.isWoken) {
        this.isWoken = false;
        return 'claim';
      }
      await this.wakeup.wait();
    }
  }
}
