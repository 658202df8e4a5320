/**
 * `read`, shared by the calls that arrive while it runs: a call made while
 * one is in flight gets that one's answer instead of starting another. Metric
 * collections (several readers, or a collection that outlived its timeout)
 * so never stack store reads on top of each other.
 */
export function singleFlight<T>(read: () => Promise<T>): () => Promise<T> {
  let inFlight: Promise<T> | undefined;
  return () =>
    (inFlight ??= read().finally(() => {
      inFlight = undefined;
    }));
}
