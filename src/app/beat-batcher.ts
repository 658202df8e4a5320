import { MAX_BEATS_PER_CALL, type BeatParams, type JobStore, type RecordedBeat } from '../store/job-store';

interface QueuedBeat {
  params: BeatParams;
  resolve: (recorded: RecordedBeat) => void;
  reject: (error: unknown) => void;
}

/**
 * Records the beats that arrive in one turn of the event loop in one store
 * call (JobStore.recordBeats), so that thousands of workers beating cost
 * the store a call per batch rather than per beat (on Redis, a script
 * call each). A beat waits at most until the loop's check phase
 * (setImmediate): no timer, so no added latency when the loop is idle.
 * While a call is under way, the beats that arrive wait for it to end and
 * go together in the next one (as a database groups commits): the busier
 * the store, the larger the batches, and a worker's beats reach the store
 * in order. A batch that reaches MAX_BEATS_PER_CALL goes at once.
 *
 * Each caller gets its own beat's outcome; a failure of the whole call
 * (the store unreachable) rejects every beat of the batch with it, as
 * separate calls would each have failed.
 */
export class BeatBatcher {
  private queued: QueuedBeat[] = [];
  private isFlushScheduled = false;
  /** Store calls under way. */
  private inFlight = 0;

  constructor(private readonly store: Pick<JobStore, 'recordBeats'>) {}

  record(params: BeatParams): Promise<RecordedBeat> {
    return new Promise<RecordedBeat>((resolve, reject) => {
      this.queued.push({ params, resolve, reject });
      if (this.queued.length >= MAX_BEATS_PER_CALL) this.flush();
      else if (!this.isFlushScheduled) {
        this.isFlushScheduled = true;
        setImmediate(() => {
          this.isFlushScheduled = false;
          this.flush();
        });
      }
    });
  }

  private flush(): void {
    const batch = this.queued;
    if (batch.length === 0 || (this.inFlight > 0 && batch.length < MAX_BEATS_PER_CALL)) return;
    this.queued = [];
    this.inFlight += 1;
    // Called here, not awaited: a store that throws synchronously still rejects through the promise.
    Promise.resolve()
      .then(() => this.store.recordBeats(batch.map(({ params }) => params)))
      .then(
        (outcomes) => batch.forEach(({ resolve }, i) => resolve(outcomes[i]!)),
        (error: unknown) => batch.forEach(({ reject }) => reject(error)),
      )
      .finally(() => {
        this.inFlight -= 1;
        this.flush();
      });
  }
}
