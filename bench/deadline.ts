/**
 * How long any one wait of the benchmark may take (an answer, a delivery, a
 * worker starting or stopping), and how long a throughput run may go
 * without progress, before its phase fails. Generous: on a machine twice as
 * slow as ours every wait is still far inside it; a wait past it is a hang.
 */
export const WAIT_MS = Number(process.env['BENCH_WAIT_MS'] ?? 30_000);

/** A wait of the benchmark that passed its deadline. */
export class DeadlineExceeded extends Error {
  override readonly name = 'DeadlineExceeded';
}

/** `work`, or a DeadlineExceeded naming `what` once `ms` pass first. */
export async function within<T>(what: string, ms: number, work: Promise<T>): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new DeadlineExceeded(`${what} did not happen within ${ms} ms`)), ms);
  });
  try {
    // The race handles a late failure of `work` too: it is never left unhandled.
    return await Promise.race([work, deadline]);
  } finally {
    clearTimeout(timer);
  }
}

/**
 * A call given a deadline: `start` gets a signal that cancels the call when
 * `ms` pass, and the wait then fails as DeadlineExceeded naming `what`.
 */
export async function call<T>(what: string, ms: number, start: (signal: AbortSignal) => Promise<T>): Promise<T> {
  const abort = new AbortController();
  try {
    return await within(what, ms, start(abort.signal));
  } finally {
    abort.abort();
  }
}

/**
 * `work`, a long wait made of many small steps (jobs delivered one after
 * another), or a DeadlineExceeded once `ms` pass in which `progress()` (a
 * count of steps) did not move: however slow the machine, a run that still
 * moves is let finish, and one that stopped fails.
 */
export async function withoutStalling<T>(what: string, ms: number, progress: () => number, work: Promise<T>): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const stalled = new Promise<never>((_, reject) => {
    let seen = progress();
    timer = setInterval(() => {
      const now = progress();
      if (now === seen) reject(new DeadlineExceeded(`${what} made no progress for ${ms} ms (${now} so far)`));
      seen = now;
    }, ms);
  });
  try {
    return await Promise.race([work, stalled]);
  } finally {
    clearInterval(timer);
  }
}

/**
 * Cleans up after a phase, within `ms`; a cleanup that fails or hangs is
 * reported on stderr and left behind (the process exits at the end of the
 * run), so that it costs no figure already measured.
 */
export async function cleanUp(what: string, ms: number, work: Promise<unknown>): Promise<void> {
  try {
    await within(what, ms, work);
  } catch (error) {
    console.warn(`cleanup: ${errorMessage(error)}`);
  }
}

/** An error's message, for one line of the report. */
export function errorMessage(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
