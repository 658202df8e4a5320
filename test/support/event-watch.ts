import type { DeepPartial } from '../../gen/ojs/server/v1/job';
import type { JobEvent, WatchEventsRequest } from '../../gen/ojs/server/v1/operator_service';
import type { Clients } from './test-server';
import { errorText } from './error-text';
import { Progress } from './waiting';

/**
 * A WatchEvents stream read in the background: the events it carried so
 * far, and waits for more. The server sends its first message (a keepalive,
 * on a server with a short keepalive interval, or an event) only once it
 * follows the log for the watcher, so `opened()` is the moment from which
 * the watcher misses nothing.
 */
export class EventWatch {
  readonly events: JobEvent[] = [];
  private messages = 0;
  private failure: Error | undefined;
  private isClosed = false;
  private isEnded = false;
  private readonly progress = new Progress();

  private constructor(private readonly abort: AbortController) {}

  static open(clients: Clients, request: DeepPartial<WatchEventsRequest> = {}): EventWatch {
    const abort = new AbortController();
    const watch = new EventWatch(abort);
    void watch.pump(clients.operator.watchEvents(request, { signal: abort.signal }));
    return watch;
  }

  /** Resolves once the server has sent anything: from then on it follows the log for this watcher. */
  async opened(): Promise<this> {
    await this.until(
      () => this.messages > 0,
      () => 'the first message of the WatchEvents stream',
    );
    return this;
  }

  /** A copy of the events collected once `holds` accepts them (fails if the stream fails first). */
  until(holds: (events: readonly JobEvent[]) => boolean, describe: () => string, timeoutMs?: number): Promise<JobEvent[]> {
    return this.progress.until(
      () => {
        if (this.failure !== undefined) throw this.failure;
        return holds(this.events) ? [...this.events] : undefined;
      },
      () => `${describe()}; have ${this.describeEvents()}`,
      timeoutMs,
    );
  }

  /** A copy of the events collected once one satisfies `predicate`. */
  untilEvent(predicate: (event: JobEvent) => boolean, what: string): Promise<JobEvent[]> {
    return this.until(
      (events) => events.some(predicate),
      () => what,
    );
  }

  /** Resolves when the server ends the stream cleanly, rejects with its error when it fails it. */
  async ended(): Promise<void> {
    await this.progress.until(
      () => this.isEnded || this.failure !== undefined,
      () => 'the WatchEvents stream to end',
    );
    if (this.failure !== undefined) throw this.failure;
  }

  /** The events so far, for failure messages. */
  private describeEvents(): string {
    return JSON.stringify(this.events.map((e) => `${e.type} ${e.subject}`));
  }

  close(): void {
    this.isClosed = true;
    this.abort.abort();
  }

  private async pump(stream: AsyncIterable<{ event?: JobEvent | undefined }>): Promise<void> {
    try {
      for await (const message of stream) {
        this.messages += 1;
        if (message.event !== undefined) this.events.push(message.event);
        this.progress.changed();
      }
      this.isEnded = true;
    } catch (error) {
      if (!this.isClosed) this.failure = error instanceof Error ? error : new Error(errorText(error));
    }
    this.progress.changed();
  }
}

/** The type and subject (job id, worker id or queue) of each event, in order: what tests compare sequences by. */
export function typesAndSubjects(events: readonly JobEvent[]): [string, string][] {
  return events.map((e) => [e.type, e.subject]);
}
