import { performance } from 'node:perf_hooks';
import { FlowProducer, Worker, type FlowJob } from 'bullmq';
import { ChainClock, driveChains, type ChainResult } from './chain-clock';
import { cleanUp, within, WAIT_MS } from './deadline';
import { SHAPE } from './shape';

/**
 * BullMQ's equivalent of a chain, as its documentation builds one with a
 * FlowProducer: a parent job runs once its children have completed, so a
 * chain of n steps is a tree n deep whose leaf is the first step. Completed
 * jobs are removed, as on the throughput runs. A wave of flows is added
 * in one addBulk, as the OJS side creates a wave's workflows at once.
 */
const connectionOf = (port: number) => ({ host: '127.0.0.1', port, maxRetriesPerRequest: null });

function chainFlow(queueName: string, chain: number, steps: number): FlowJob {
  let flow: FlowJob | undefined;
  for (let step = 0; step < steps; step++) {
    const children = flow === undefined ? [] : [flow];
    flow = { name: 'noop', queueName, data: { chain, step }, opts: { removeOnComplete: true }, children };
  }
  return flow!;
}

/** As ojsChains: `wave` flows at a time, added in one addBulk. */
export async function bullmqChains(
  redisPort: number,
  chains: number,
  steps: number,
  wave: number,
  run: string,
  waitMs = WAIT_MS,
): Promise<ChainResult> {
  const queueName = `chains-${run}`;
  const connection = connectionOf(redisPort);
  const clock = new ChainClock(chains, steps);
  const processor = async (job: { data: { chain: number; step: number } }): Promise<void> => {
    clock.started(job.data.chain, job.data.step);
    clock.ended(job.data.chain, job.data.step);
  };
  const workers = Array.from(
    { length: SHAPE.workers },
    () => new Worker(queueName, processor, { connection, concurrency: SHAPE.concurrency }),
  );
  const flows = new FlowProducer({ connection });
  try {
    await within('the BullMQ workers starting', waitMs, Promise.all(workers.map((worker) => worker.waitUntilReady())));
    const started = performance.now();
    await driveChains(clock, wave, waitMs, (numbers) => flows.addBulk(numbers.map((c) => chainFlow(queueName, c, steps))));
    return { rate: chains / ((performance.now() - started) / 1000), stepGaps: clock.stepGaps };
  } finally {
    await cleanUp(`${workers.length} BullMQ worker(s) closing`, waitMs, Promise.all(workers.map((worker) => worker.close())));
    await cleanUp('the BullMQ flow producer closing', waitMs, flows.close());
  }
}
