import { ClientError, Status } from 'nice-grpc';
import type { JobError } from '../gen/ojs/server/v1/job';
import type { SettlementResult, WorkerServiceClient } from '../gen/ojs/server/v1/worker_service';
import { pause } from '../lib/pause';
import { Backoff } from './backoff';
import type { Logger } from './logger';
import { isSizeRefusal } from './refusals';

/** The server's answer for one settlement, or why it never got one. */
export type SettlementOutcome = { ok: true } | { ok: false; code: string; message: string };

interface Pending<T> {
  item: T;
  resolve: (outcome: SettlementOutcome) => void;
}

interface AckItem {
  jobId: string;
  leaseToken: string;
  result: unknown;
}

/** Settlements of one kind waiting to be sent, and the batch call that sends them. */
interface Queue<T> {
  waiting: Pending<T>[];
  /** Calls of this kind under way. */
  sending: number;
  call: (items: T[]) => Promise<SettlementResult[]>;
  /** The outcome code of one item too large for the server to take (its result, or its error). */
  tooLargeCode: string;
}

interface FailItem {
  jobId: string;
  leaseToken: string;
  error: JobError;
}

/** Call failures worth retrying: the server or the network went away, or its store is full; not a refusal. */
const RETRYABLE = new Set([
  Status.UNAVAILABLE,
  Status.DEADLINE_EXCEEDED,
  Status.CANCELLED,
  Status.UNKNOWN,
  Status.INTERNAL,
  Status.RESOURCE_EXHAUSTED,
]);

/**
 * Acks and fails, coalesced into AckBatch and FailBatch calls (one unary
 * call costs the server far more than an item in it). With `coalesceMs` 0
 * (the default) a settlement goes at once, with those of the same turn of
 * the event loop, when no call of its kind is under way; while one is, the
 * settlements made meanwhile wait for its answer and go together in the
 * next call (as a database groups commits): an idle worker adds no delay,
 * a busy one sends larger batches. With `coalesceMs` above 0, settlements
 * made within that many milliseconds of each other go together. A call that fails because the server
 * is unreachable is retried with backoff until it is answered or the queue
 * is closed, so jobs finished during an outage are acknowledged once the
 * server is back. A call too large for the server (large results add up to
 * more than its message limit) goes again in halves.
 */
export class Settlements {
  private readonly acks: Queue<AckItem>;
  private readonly fails: Queue<FailItem>;
  private timer: NodeJS.Timeout | undefined;
  private immediate: NodeJS.Immediate | undefined;
  private readonly inFlight = new Set<Promise<void>>();
  private readonly closing = new AbortController();

  constructor(
    client: WorkerServiceClient,
    workerId: string,
    private readonly logger: Logger,
    private readonly options: { coalesceMs: number; maxBatch: number } = { coalesceMs: 0, maxBatch: 200 },
  ) {
    this.acks = {
      waiting: [],
      sending: 0,
      call: (completions) => client.ackBatch({ workerId, completions }).then((r) => r.results),
      tooLargeCode: 'result_too_large',
    };
    this.fails = {
      waiting: [],
      sending: 0,
      call: (failures) => client.failBatch({ workerId, failures }).then((r) => r.results),
      tooLargeCode: 'payload_too_large',
    };
  }

  ack(jobId: string, leaseToken: string, result: unknown): Promise<SettlementOutcome> {
    return this.add(this.acks, { jobId, leaseToken, result });
  }

  fail(jobId: string, leaseToken: string, error: JobError): Promise<SettlementOutcome> {
    return this.add(this.fails, { jobId, leaseToken, error });
  }

  /** Sends what waits and resolves when every settlement so far has an answer (or `timeoutMs` passed). */
  async drain(timeoutMs: number): Promise<boolean> {
    this.flush();
    const settled = Promise.all(this.inFlight).then(() => true);
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<boolean>((resolve) => (timer = setTimeout(() => resolve(false), timeoutMs)));
    const done = await Promise.race([settled, late]);
    clearTimeout(timer);
    return done;
  }

  /** Stops retrying: settlements still unanswered resolve as not delivered. */
  close(): void {
    this.closing.abort();
    this.flush();
  }

  private add<T>(queue: Queue<T>, item: T): Promise<SettlementOutcome> {
    return new Promise((resolve) => {
      queue.waiting.push({ item, resolve });
      if (queue.waiting.length >= this.options.maxBatch) this.sendWaiting(queue);
      else if (this.options.coalesceMs > 0) this.timer ??= setTimeout(() => this.flush(), this.options.coalesceMs);
      // Otherwise at the end of this turn if no call is under way; else when it is answered (sendWaiting).
      else if (queue.sending === 0) this.immediate ??= setImmediate(() => this.sendIdle());
    });
  }

  private flush(): void {
    clearTimeout(this.timer);
    this.timer = undefined;
    this.sendWaiting(this.acks);
    this.sendWaiting(this.fails);
  }

  /** Sends the settlements of each kind that has no call under way. */
  private sendIdle(): void {
    this.immediate = undefined;
    if (this.acks.sending === 0) this.sendWaiting(this.acks);
    if (this.fails.sending === 0) this.sendWaiting(this.fails);
  }

  private sendWaiting<T>(queue: Queue<T>): void {
    if (queue.waiting.length === 0) return;
    const batch = queue.waiting;
    queue.waiting = [];
    queue.sending += 1;
    this.track(
      this.send(batch, queue).finally(() => {
        queue.sending -= 1;
        // What waited for this answer goes now (grouped), unless a timer coalesces instead.
        if (this.options.coalesceMs === 0 && queue.sending === 0) this.sendWaiting(queue);
      }),
    );
  }

  private track(sending: Promise<void>): void {
    this.inFlight.add(sending);
    void sending.finally(() => this.inFlight.delete(sending));
  }

  private async send<T>(batch: Pending<T>[], queue: Queue<T>): Promise<void> {
    const backoff = new Backoff(100, 5_000);
    for (;;) {
      try {
        const results = await queue.call(batch.map(({ item }) => item));
        batch.forEach(({ resolve }, i) => resolve(toOutcome(results[i])));
        return;
      } catch (error) {
        if (isSizeRefusal(error)) return this.sendSmaller(batch, queue, error.details);
        const status = error instanceof ClientError ? error.code : Status.UNKNOWN;
        if (!RETRYABLE.has(status) || this.closing.signal.aborted) {
          const message = error instanceof Error ? error.message : String(error);
          for (const { resolve } of batch) resolve({ ok: false, code: Status[status] ?? 'UNKNOWN', message });
          return;
        }
        this.logger.warn({ err: error, jobs: batch.length }, 'could not settle jobs; retrying');
        await pause(backoff.next(), this.closing.signal);
      }
    }
  }

  /**
   * A batch the server would not take for its size goes again in halves;
   * one settlement that it would not take alone is refused as too large.
   */
  private async sendSmaller<T>(batch: Pending<T>[], queue: Queue<T>, message: string): Promise<void> {
    if (batch.length === 1) {
      batch[0]!.resolve({ ok: false, code: queue.tooLargeCode, message });
      return;
    }
    const half = Math.ceil(batch.length / 2);
    await Promise.all([this.send(batch.slice(0, half), queue), this.send(batch.slice(half), queue)]);
  }
}

function toOutcome(result: SettlementResult | undefined): SettlementOutcome {
  if (result === undefined) return { ok: false, code: 'missing', message: 'the server sent no result for this job' };
  return result.ok ? { ok: true } : { ok: false, code: result.errorCode, message: result.errorMessage };
}
