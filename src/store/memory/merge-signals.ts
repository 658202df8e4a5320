import type { StoreSignal } from '../store-signal';

/**
 * Folds per-job signals into one per queue or worker, summing counts and
 * joining the ids of cancelled jobs (a bulk cancel tells each worker once),
 * keeping the earliest of the times jobs fall due;
 * other signals pass unchanged, in order. Linear in the number of signals.
 */
export function mergeSignals(signals: StoreSignal[]): StoreSignal[] {
  if (signals.length < 2) return signals;
  const merged = new Map<string, StoreSignal>();
  for (const signal of signals) {
    const key = keyOf(signal);
    const previous = key === undefined ? undefined : merged.get(key);
    if (key === undefined) merged.set(`${merged.size}`, signal);
    else if (previous === undefined)
      merged.set(key, signal.kind === 'jobsCancelled' ? { ...signal, jobIds: [...signal.jobIds] } : { ...signal });
    else if (previous.kind === 'jobsCancelled' && signal.kind === 'jobsCancelled') previous.jobIds.push(...signal.jobIds);
    else if ('count' in previous && 'count' in signal) previous.count += signal.count;
    else if ('at' in previous && 'at' in signal) previous.at = Math.min(previous.at, signal.at);
  }
  return [...merged.values()];
}

function keyOf(signal: StoreSignal): string | undefined {
  switch (signal.kind) {
    case 'jobsAvailable':
      return `a:${signal.queue}`;
    case 'capacityFreed':
      return `c:${signal.workerId}`;
    case 'jobsCancelled':
      return `x:${signal.workerId}`;
    case 'dueAt':
      return 'u';
    case 'scheduleDueAt':
      return 'n';
    case 'workerDirected':
    case 'workerRemoved':
    case 'jobsTimedOut':
    case 'jobsReclaimed':
    case 'availability':
      return undefined;
  }
}
