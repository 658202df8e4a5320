import type { FetchSession } from '../../../src/app/fetch-session';
import type { WorkerStreams } from '../../../src/app/worker-streams';
import type { Job } from '../../../src/domain/job';
import { Wakeup } from '../../../lib/wakeup';

/**
 * A session's deliveries (WorkerStreams.deliver) pulled one batch at a
 * time, as a test reads them: each next() takes the next batch, and the
 * loop claims again only once the test asks for another, as it would once
 * a stream wrote the last. return() closes the stream.
 */
export async function* pulledDeliveries(streams: WorkerStreams, session: FetchSession): AsyncGenerator<Job[]> {
  const batches: Job[][] = [];
  let taken: (() => void) | undefined;
  let isDone = false;
  const arrived = new Wakeup();
  const loop = streams
    .deliver(
      session,
      (jobs) =>
        new Promise<void>((resolve) => {
          batches.push(jobs);
          taken = resolve;
          arrived.notify();
        }),
    )
    .finally(() => {
      isDone = true;
      arrived.notify();
    });
  try {
    for (;;) {
      const batch = batches.shift();
      if (batch !== undefined) {
        yield batch;
        taken?.();
      } else if (isDone) {
        return await loop;
      } else {
        await arrived.wait();
      }
    }
  } finally {
    session.end('client_cancelled');
    taken?.();
    await loop.catch(() => undefined);
  }
}
