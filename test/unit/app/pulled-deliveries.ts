import type { FetchSession } from '../../../src/app/fetch-session';
import type { WorkerStreams } from '../../../src/app/worker-streams';
import type { Job } from '../../../src/domain/job';
import { AsyncQueue } from '../../../lib/async-queue';

/**
 * A session's deliveries (WorkerStreams.deliver) pulled one batch at a
 * time, as a test reads them: each next() takes the next batch, and the
 * loop claims again only once the test asks for another, as it would once
 * a stream wrote the last. return() closes the stream.
 */
export async function* pulledDeliveries(streams: WorkerStreams, session: FetchSession): AsyncGenerator<Job[]> {
  // Each batch with what lets the loop go on: its send settles once the test has taken it.
  const batches = new AsyncQueue<{ jobs: Job[]; taken: () => void }>();
  const loop = streams
    .deliver(session, (jobs) => new Promise<void>((taken) => batches.push({ jobs, taken })))
    .then(
      () => batches.end(),
      (error: unknown) => batches.fail(error),
    );
  let taken: (() => void) | undefined;
  try {
    for await (const batch of batches) {
      taken = batch.taken;
      yield batch.jobs;
      taken();
    }
  } finally {
    session.end('client_cancelled');
    taken?.();
    await loop;
  }
}
