import { AsyncQueue } from '../../lib/async-queue';

/**
 * Reads a server stream one message at a time, so a test can wait for the
 * next message (an event) instead of sleeping. `ended` resolves when the
 * stream finishes cleanly and rejects with its error otherwise.
 */
export class StreamReader<T> {
  private readonly iterator: AsyncIterator<T>;
  /** The read in progress. nice-grpc opens a call on the first read, so one is always pending. */
  private pending: Promise<IteratorResult<T>>;

  constructor(
    stream: AsyncIterable<T>,
    private readonly abort: AbortController,
  ) {
    this.iterator = stream[Symbol.asyncIterator]();
    this.pending = this.read();
  }

  async next(): Promise<T> {
    const result = await this.take();
    if (result.done === true) throw new Error('stream ended');
    return result.value;
  }

  /** The next message that satisfies `predicate`, skipping others (e.g. keepalives). */
  async nextMatching(predicate: (message: T) => boolean): Promise<T> {
    for (;;) {
      const message = await this.next();
      if (predicate(message)) return message;
    }
  }

  /** Resolves with the messages still to come once the stream ends cleanly. */
  async ended(): Promise<T[]> {
    const rest: T[] = [];
    for (;;) {
      const result = await this.take();
      if (result.done === true) return rest;
      rest.push(result.value);
    }
  }

  close(): void {
    this.abort.abort();
  }

  private async take(): Promise<IteratorResult<T>> {
    const result = await this.pending;
    this.pending = result.done === true ? Promise.resolve(result) : this.read();
    return result;
  }

  private read(): Promise<IteratorResult<T>> {
    const read = this.iterator.next();
    read.catch(() => {}); // Surfaced by take(); a stream nobody reads again must not crash the test.
    return read;
  }
}

/** A client-side request stream for a bidi call: push messages, end when done. */
export class RequestStream<T> {
  readonly queue = new AsyncQueue<T>();

  send(message: T): void {
    this.queue.push(message);
  }

  end(): void {
    this.queue.end();
  }
}
