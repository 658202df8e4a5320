import { desiredState, type Worker, type WorkerRegistration, type WorkerState } from '../../domain/worker';
import { fromFlatHash, toPairs, type FlatHash } from './hash-fields';

/**
 * A worker as a Redis hash: the registration as JSON, and the scalar fields
 * scripts compare and set. `desired` is stored (computed by the domain) so
 * that the claim script never re-implements the desired-state rule.
 */
export function newWorkerPairs(worker: Worker): string[] {
  const registration: WorkerRegistration = {
    workerId: worker.workerId,
    hostname: worker.hostname,
    pid: worker.pid,
    queues: worker.queues,
    concurrency: worker.concurrency,
    labels: worker.labels,
  };
  if (worker.startedAt !== undefined) registration.startedAt = worker.startedAt;
  return toPairs({
    registration: JSON.stringify(registration),
    concurrency: worker.concurrency,
    registeredAt: worker.registeredAt,
    state: worker.state,
    directive: worker.directive,
    desired: desiredState(worker),
    lastBeatAt: worker.lastBeatAt,
    lastSequence: worker.lastSequence,
    reportedJobIds: JSON.stringify(worker.reportedJobIds),
  });
}

export function decodeWorker(hash: FlatHash): Worker {
  const fields = fromFlatHash(hash);
  const registration = JSON.parse(fields['registration']!) as WorkerRegistration;
  const worker: Worker = {
    ...registration,
    registeredAt: Number(fields['registeredAt']),
    state: fields['state'] as WorkerState,
    lastBeatAt: Number(fields['lastBeatAt']),
    lastSequence: Number(fields['lastSequence'] ?? 0),
    reportedJobIds: JSON.parse(fields['reportedJobIds'] ?? '[]') as string[],
  };
  if (fields['directive'] !== undefined) worker.directive = fields['directive'] as WorkerState;
  return worker;
}
