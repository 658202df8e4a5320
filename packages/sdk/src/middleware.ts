/**
 * A middleware wraps the next step: it may change the input, act before and
 * after, or decide not to call `next` at all (the next() pattern of Koa and
 * Sidekiq). Used for job execution and for enqueueing.
 */
export type Middleware<In, Out> = (input: In, next: (input: In) => Promise<Out>) => Promise<Out>;

/** Chains middleware around `last`, the first registered outermost. */
export function compose<In, Out>(
  middleware: readonly Middleware<In, Out>[],
  last: (input: In) => Promise<Out>,
): (input: In) => Promise<Out> {
  return middleware.reduceRight<(input: In) => Promise<Out>>((next, layer) => (input) => layer(input, next), last);
}
