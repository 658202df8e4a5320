import { ClientError, Status } from 'nice-grpc';
import { pause } from '../lib/pause';
import { Backoff } from './backoff';

export interface UnreachableRetries {
  /** How many times the call is tried again in a row while the server is unreachable. */
  retries: number;
  /** Which failures mean the server is unreachable; by default UNAVAILABLE. */
  isUnreachable?: (error: unknown) => boolean;
  /** Ends the retrying: the call's own failure (an abort) is thrown. */
  signal?: AbortSignal;
}

/**
 * Makes a call, trying again with backoff (100 ms growing to 2 s, jittered)
 * while the server is unreachable, at most `retries` more times; any other
 * failure, or the last one, is thrown. `call` learns whether it is a retry:
 * a call whose answer was lost may have been carried out.
 */
export async function retryWhileUnreachable<T>(call: (isRetry: boolean) => Promise<T>, options: UnreachableRetries): Promise<T> {
  const isUnreachable = options.isUnreachable ?? ((error: unknown) => hasStatus(error, Status.UNAVAILABLE));
  const backoff = new Backoff(100, 2_000);
  for (let attempt = 0; ; attempt++) {
    try {
      return await call(attempt > 0);
    } catch (error) {
      if (!isUnreachable(error) || attempt >= options.retries || options.signal?.aborted === true) throw error;
      await pause(backoff.next(), options.signal);
    }
  }
}

export function hasStatus(error: unknown, status: Status): boolean {
  return error instanceof ClientError && error.code === status;
}
