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
  /** Resolves the promise next() returned, while the loop waits. */
  private waiter: ((step: FetchStep) => void) | undefined;

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
    this.resume();
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
    this.resume();
  }

  /**
   * Waits until there is something to do. A promise and its resolver, no
   * more: one waits for each of a replica's idle workers, and a new one
   * after each delivery, which lives as long as the worker's next wait.
   */
  next(): Promise<FetchStep> {
    const step = this.step();
    return step === undefined ? new Promise((resolve) => (this.waiter = resolve)) : Promise.resolve(step);
  }

  /** The step there is to take now, if any: ending outranks a wake, which is taken once. */
  private step(): FetchStep | undefined {
    if (this.ended !== undefined) return 'end';
    if (!this.isWoken) return undefined;
    this.isWoken = false;
    return 'claim';
  }

  /** Hands a waiting loop its next step, now that there is one. */
  private resume(): void {
    const waiter = this.waiter;
    if (waiter === undefined) return;
    const step = this.step();
    if (step === undefined) return;
    this.waiter = undefined;
    waiter(step);
  }
}
