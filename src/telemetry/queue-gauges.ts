import type { Meter } from '@opentelemetry/api';
import type { QueueJobCounts } from '../app/ports';
import { JOB_STATES } from '../domain/job';
import { singleFlight } from './single-flight';
import { METRIC } from './telemetry-names';

/**
 * The gauges of jobs by queue (ojs-events 7.2): `ojs.queue.depth`
 * (available), `ojs.queue.active`, `ojs.dead_letter.depth` (discarded, by
 * the queue the jobs came from) and `ojs.queue.jobs` (every state, by queue
 * and state). One read of the store feeds all four on each collection, and
 * a collection never starts a read while another is in flight.
 *
 * The values are the store's, the same on every replica: aggregate them
 * across replicas with max (or pick one), never sum.
 */
export function observeQueueGauges(meter: Meter, read: () => Promise<QueueJobCounts[]>): void {
  const gauge = (name: string, description: string) => meter.createObservableGauge(name, { description, unit: '{job}' });
  const depth = gauge(METRIC.queueDepth, 'Jobs available, per queue');
  const active = gauge(METRIC.queueActive, 'Jobs active, per queue');
  const deadLetter = gauge(METRIC.deadLetterDepth, 'Jobs discarded (the dead letter set), per queue they came from');
  const jobs = gauge(METRIC.queueJobs, 'Jobs per queue and state');
  const readShared = singleFlight(read);
  meter.addBatchObservableCallback(
    async (result) => {
      for (const counts of await readShared()) {
        const queue = { queue: counts.queue };
        result.observe(depth, counts.available, queue);
        result.observe(active, counts.active, queue);
        result.observe(deadLetter, counts.discarded, queue);
        for (const state of JOB_STATES) result.observe(jobs, counts[state], { queue: counts.queue, state });
      }
    },
    [depth, active, deadLetter, jobs],
  );
}
