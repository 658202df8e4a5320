import { Worker as Thread } from 'node:worker_threads';

/**
 * Runs a CPU-heavy computation in a worker thread. A handler that computes
 * on the main thread blocks the event loop: no beats, no acks, no other jobs
 * until it returns (the SDK's defaults tolerate seconds of that, not
 * minutes). In a thread it runs beside them, and the job's AbortSignal
 * terminates it.
 */
export function runInThread(n: number, signal: AbortSignal): Promise<number> {
  return new Promise((resolve, reject) => {
    const thread = new Thread(
      `
      const { parentPort, workerData } = require('node:worker_threads');
      const fib = (k) => (k < 2 ? k : fib(k - 1) + fib(k - 2));
      parentPort.postMessage(fib(workerData));
      `,
      { eval: true, workerData: n },
    );
    const abort = (): void => {
      void thread.terminate();
      reject(signal.reason instanceof Error ? signal.reason : new Error('aborted', { cause: signal.reason }));
    };
    signal.addEventListener('abort', abort, { once: true });
    thread.once('message', (value: number) => {
      signal.removeEventListener('abort', abort);
      resolve(value);
    });
    thread.once('error', reject);
  });
}
