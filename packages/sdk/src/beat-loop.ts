import { ClientError, Status } from 'nice-grpc';
import type { BeatResponse, WorkerState } from '../gen/ojs/server/v1/worker_service';
import { pause } from '../lib/pause';
import { Backoff } from './backoff';
import type { Logger } from './logger';
import { CREDENTIALS_REFUSED, isCredentialRefusal } from './refusals';
import type { BeatCall, WorkerStreamClient } from './worker-stream-client';

export interface BeatLoopDeps {
  streams: WorkerStreamClient;
  workerId: string;
  logger: Logger;
  /** The beat interval the server announced at registration. */
  intervalMs: () => number;
  /** What the worker reports: its state and every job it holds (worker-protocol 4.2). */
  report: () => { state: WorkerState; activeJobIds: string[] };
  /**
   * Every message from the server: answers and pushes (directives,
   * cancellations, timeouts). `stateIsCurrent` is false for a message the
   * server sent before it saw the worker's latest state change: its state is
   * stale and must not undo that change.
   */
  onMessage: (response: BeatResponse, stateIsCurrent: boolean) => void;
  /** The server does not know the worker (it restarted, or declared the worker dead): register again. */
  onWorkerUnknown: () => Promise<void>;
}

/**
 * The Beat stream: a beat every interval, and at once when the worker's
 * state changes. When the stream breaks it is opened again with backoff;
 * the worker keeps its state and its jobs meanwhile (worker-protocol 4.6),
 * and the server keeps them as long as a beat arrives within its timeout.
 */
export class BeatLoop {
  private sequence = 0;
  /** The state of the last beat sent, and the sequence of the first beat that reported it. */
  private lastState: WorkerState | undefined;
  private changedAt = 0;
  /** The open stream, while one is. */
  private call: BeatCall | undefined;
  private readonly replies = new Map<number, (response: BeatResponse) => void>();
  private readonly stopping = new AbortController();
  private running: Promise<void> | undefined;

  constructor(private readonly deps: BeatLoopDeps) {}

  start(): void {
    this.running ??= this.run();
  }

  /**
   * Beats now; resolves with the answer, or undefined if none came within
   * `timeoutMs` (the server is unreachable: the worker carries on).
   */
  async beatNow(timeoutMs = 2_000): Promise<BeatResponse | undefined> {
    const sequence = this.send();
    if (sequence === undefined) return undefined;
    let timer: NodeJS.Timeout | undefined;
    const answer = await Promise.race([
      new Promise<BeatResponse>((resolve) => this.replies.set(sequence, resolve)),
      new Promise<undefined>((resolve) => (timer = setTimeout(() => resolve(undefined), timeoutMs))),
    ]);
    clearTimeout(timer);
    this.replies.delete(sequence);
    return answer;
  }

  /** Closes the stream for good. */
  async stop(): Promise<void> {
    this.stopping.abort();
    await this.running;
  }

  private async run(): Promise<void> {
    const backoff = new Backoff(200, 5_000);
    while (!this.stopping.signal.aborted) {
      // A stream holds its callbacks and one promise, its end: a wait between beats holds nothing of its own.
      const call = this.deps.streams.beat((response) => {
        backoff.reset();
        this.onMessage(response);
      });
      const cancel = (): void => call.cancel();
      this.stopping.signal.addEventListener('abort', cancel);
      this.call = call;
      this.send();
      const timer = setInterval(() => this.send(), this.deps.intervalMs());
      const end = await call.ended;
      clearInterval(timer);
      this.call = undefined;
      this.stopping.signal.removeEventListener('abort', cancel);
      if (this.stopping.signal.aborted) break;
      if (end instanceof ClientError && end.code === Status.NOT_FOUND) {
        await this.deps.onWorkerUnknown();
      } else if (isCredentialRefusal(end)) {
        this.deps.logger.error({ err: end }, CREDENTIALS_REFUSED);
      } else if (end !== undefined) {
        this.deps.logger.warn({ err: end }, 'beat stream failed; reconnecting');
      }
      await pause(backoff.next(), this.stopping.signal);
    }
  }

  private onMessage(response: BeatResponse): void {
    this.replies.get(response.inReplyTo)?.(response);
    if (response.inReplyTo >= this.changedAt) this.changedAt = 0;
    this.deps.onMessage(response, this.changedAt === 0);
  }

  /** Sends a beat on the open stream; returns its sequence, or undefined when no stream is open. */
  private send(): number | undefined {
    const call = this.call;
    if (call === undefined) return undefined;
    const { state, activeJobIds } = this.deps.report();
    this.sequence += 1;
    if (state !== this.lastState) {
      this.lastState = state;
      this.changedAt = this.sequence;
    }
    call.write({ workerId: this.deps.workerId, state, activeJobs: activeJobIds.length, activeJobIds, sequence: this.sequence });
    return this.sequence;
  }
}
