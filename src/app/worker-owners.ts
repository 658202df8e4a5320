import { workerNotFound } from '../domain/errors';
import type { Principal } from '../domain/principal';
import { isOwnedBy, type Worker } from '../domain/worker';
import type { JobStore } from '../store/job-store';

/** Most owners remembered; past it the oldest are forgotten (and read again when next needed). */
const MAX_REMEMBERED = 100_000;

/**
 * The owners of live workers, remembered by this replica so that Ack, Fail,
 * ReportProgress and ExtendLease check the caller without a store round
 * trip per call. A worker's owner never changes while it lives: an id is
 * only registered again after its removal, and every removal (the
 * workerRemoved signal, from any replica) forgets it. When signals may have
 * been lost (the store was away), everything is forgotten. A stale entry
 * could at worst let its former owner name the id: it would still need
 * lease tokens that only the new owner's Fetch stream received.
 */
export class WorkerOwners {
  private readonly owners = new Map<string, string>();
  /** Counts forgettings, so that a read that raced one is not remembered. */
  private forgettings = 0;
  private readonly unsubscribe: () => void;

  constructor(private readonly store: JobStore) {
    this.unsubscribe = store.subscribe((signal) => {
      if (signal.kind === 'workerRemoved') this.forget(signal.workerId);
      else if (signal.kind === 'availability') this.forgetAll();
    });
  }

  /** Remembers the owner of a worker just read or registered. */
  remember(worker: Pick<Worker, 'workerId' | 'owner'>): void {
    this.owners.delete(worker.workerId);
    this.owners.set(worker.workerId, worker.owner);
    if (this.owners.size > MAX_REMEMBERED) this.owners.delete(this.owners.keys().next().value!);
  }

  /**
   * Refuses a caller that is not the worker's owner with the same NOT_FOUND
   * as for an unknown worker id, so that a stranger cannot tell whether the
   * worker exists. Reads the store only for a worker not yet remembered:
   * a remembered one is checked at once, without a promise (every beat of
   * every worker is checked here).
   */
  assertOwner(caller: Principal, workerId: string): Promise<void> | undefined {
    const owner = this.owners.get(workerId);
    if (owner === undefined) return this.assertOwnerRead(caller, workerId);
    if (!isOwnedBy({ owner }, caller)) throw workerNotFound(workerId);
    return undefined;
  }

  private async assertOwnerRead(caller: Principal, workerId: string): Promise<void> {
    const before = this.forgettings;
    const snapshot = await this.store.getWorker(workerId);
    if (snapshot === undefined) throw workerNotFound(workerId);
    if (this.forgettings === before) this.remember(snapshot.worker);
    if (!isOwnedBy(snapshot.worker, caller)) throw workerNotFound(workerId);
  }

  stop(): void {
    this.unsubscribe();
  }

  private forget(workerId: string): void {
    this.forgettings++;
    this.owners.delete(workerId);
  }

  private forgetAll(): void {
    this.forgettings++;
    this.owners.clear();
  }
}
