import type { StoreSignal } from '../store-signal';

/**
 * Folds per-job signals into one per queue or worker, summing counts; other
 * signals pass unchanged, in order. Linear in the number of signals.
 */
export function mergeSignals(signals: StoreSignal[]): StoreSignal[] {
  if (signals.length < 2) return signals;
  const merged = new Map<string, StoreSignal>();
  for (const signal of signals) {
    const key =
      signal.kind === 'jobsAvailable' ? `a:${signal.queue}` : signal.kind === 'capacityFreed' ? `c:${signal.workerId}` : undefined;
    const previous = key === undefined ? undefined : merged.get(key);
    if (key === undefined) merged.set(`${merged.size}`, signal);
    else if (previous !== undefined && 'count' in previous && 'count' in signal) previous.count += signal.count;
    else merged.set(key, { ...signal });
  }
  return [...merged.values()];
}
