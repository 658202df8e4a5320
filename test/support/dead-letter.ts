import { HandlerCode, type Job } from '../../gen/ojs/server/v1/job';
import { enqueue } from './jobs';
import type { Clients } from './test-server';
import { TestWorker } from './test-worker';

/**
 * Puts `count` new jobs of `queue` into the dead letter: a worker of its own
 * fails each with DEAD_LETTER, then deregisters. Returns the jobs as enqueued.
 */
export async function deadLetterJobs(clients: Clients, queue: string, count: number): Promise<Job[]> {
  const jobs = await enqueue(clients, ...Array.from({ length: count }, (_, n) => ({ type: 'test.doomed', queue, args: [n] })));
  const worker = await TestWorker.register(clients, { queues: [queue] });
  const fetch = worker.openFetch();
  try {
    let failed = 0;
    while (failed < jobs.length) {
      for (const delivery of (await fetch.next()).deliveries) {
        await worker.fail(delivery, { type: 'test.doomed', code: HandlerCode.HANDLER_CODE_DEAD_LETTER });
        failed += 1;
      }
    }
  } finally {
    fetch.close();
  }
  await clients.workers.deregister({ workerId: worker.workerId });
  return jobs;
}
