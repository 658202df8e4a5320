import { pause } from '../../lib/pause';
import { errorText } from './error-text';

/**
 * Waiting on events rather than sleeping. A `Progress` is told when some
 * state may have changed (a message arrived); `until` re-checks its
 * condition on each change and fails after a bound, saying what it waited
 * for and what it saw.
 */
export class Progress {
  private readonly waiters = new Set<() => void>();

  changed(): void {
    // A copy: waiters remove themselves as they run.
    for (const waiter of Array.from(this.waiters)) waiter();
  }

  /** Resolves with the first truthy result of `check`, re-run on every change. */
  until<T>(check: () => T | undefined | false, describe: () => string, timeoutMs = 10_000): Promise<T> {
    return new Promise((resolve, reject) => {
      const attempt = (): boolean => {
        let result: T | undefined | false;
        try {
          result = check();
        } catch (error) {
          finish();
          reject(error instanceof Error ? error : new Error(errorText(error)));
          return true;
        }
        if (result === undefined || result === false) return false;
        finish();
        resolve(result);
        return true;
      };
      const timer = setTimeout(() => {
        finish();
        reject(new Error(`timed out after ${timeoutMs} ms waiting for ${describe()}`));
      }, timeoutMs);
      const finish = (): void => {
        clearTimeout(timer);
        this.waiters.delete(onChange);
      };
      const onChange = (): void => {
        attempt();
      };
      if (!attempt()) this.waiters.add(onChange);
    });
  }
}

/**
 * For states no stream announces: asks (real RPCs) every `intervalMs` until
 * `check` returns a value, failing after `timeoutMs` with `describe()` of
 * the last answer. A check that throws (a server still reconnecting to
 * Redis answers UNAVAILABLE) is asked again; its error is part of the failure.
 */
export async function eventually<T>(
  check: () => Promise<T | undefined>,
  describe: () => string,
  { timeoutMs = 10_000, intervalMs = 50 }: { timeoutMs?: number; intervalMs?: number } = {},
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let lastError: unknown;
  for (;;) {
    try {
      const result = await check();
      if (result !== undefined) return result;
      lastError = undefined;
    } catch (error) {
      lastError = error;
    }
    if (Date.now() >= deadline) {
      const cause = lastError === undefined ? '' : ` (last check failed: ${errorText(lastError)})`;
      throw new Error(`timed out after ${timeoutMs} ms waiting for ${describe()}${cause}`);
    }
    await pause(intervalMs);
  }
}

/** `promise`, or a failure naming `description` if it takes longer than `timeoutMs`. */
export async function within<T>(promise: Promise<T>, timeoutMs: number, description: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timedOut = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`timed out after ${timeoutMs} ms waiting for ${description}`)), timeoutMs);
  });
  try {
    return await Promise.race([promise, timedOut]);
  } finally {
    clearTimeout(timer);
  }
}

/** `eventually` for a value read again until `holds` accepts it; fails naming the last value read. */
export function eventuallyHolds<T>(read: () => Promise<T>, holds: (value: T) => boolean, timeoutMs = 5_000): Promise<T> {
  let last: T | undefined;
  return eventually(
    async () => {
      last = await read();
      return holds(last) ? last : undefined;
    },
    () => `a condition to hold; last value ${JSON.stringify(last)}`,
    { timeoutMs, intervalMs: 20 },
  );
}
