import type { AppContext } from './app-context';

/**
 * Calls `listener` with each time the store announces that something now
 * falls due before everything else of its kind (`dueAt`: a scheduled or
 * retryable job; `scheduleDueAt`: a cron schedule's tick), and with now
 * when the store is back from an outage, since announcements may have
 * been lost meanwhile. Returns the unsubscribe.
 */
export function watchDueTimes(ctx: AppContext, kind: 'dueAt' | 'scheduleDueAt', listener: (at: number) => void): () => void {
  return ctx.store.subscribe((signal) => {
    if (signal.kind === kind) listener(signal.at);
    else if (signal.kind === 'availability' && signal.isAvailable) listener(ctx.clock.now());
  });
}
