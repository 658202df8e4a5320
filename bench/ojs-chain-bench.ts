import { performance } from 'node:perf_hooks';
import { chain, Producer, Worker } from '../packages/sdk/src';
import { ChainClock, type ChainResult } from './chain-clock';
import { cleanUp, within, withoutStalling, WAIT_MS } from './deadline';
import { benchLogger } from './ojs-bench';
import { SHAPE } from './shape';

/** Workflows created at once by the producer, as BullMQ's side adds its flows in bulk. */
const CHAINS_PER_WAVE = 50;

/**
 * Chains of `steps` no-op jobs through the SDK, written as a user would:
 * `producer.createWorkflow(chain(...))`, SDK workers with the throughput
 * runs' shape running every step. Waves of workflows are created at once;
 * the run ends when every chain's last step has run.
 */
export async function ojsChains(address: string, chains: number, steps: number, run: string, waitMs = WAIT_MS): Promise<ChainResult> {
  const queue = `chains-${run}`;
  const clock = new ChainClock(chains, steps);
  const workers = Array.from({ length: SHAPE.workers }, () =>
    new Worker({ address, queues: [queue], concurrency: SHAPE.concurrency, logger: benchLogger }).handle('bench.step', async ([c, k]) => {
      clock.started(c as number, k as number);
      clock.ended(c as number, k as number);
    }),
  );
  const producer = new Producer({ address });
  try {
    await within(`${workers.length} SDK worker(s) starting`, waitMs, Promise.all(workers.map((worker) => worker.start())));
    const started = performance.now();
    for (let first = 0; first < chains; first += CHAINS_PER_WAVE) {
      const wave = Array.from({ length: Math.min(CHAINS_PER_WAVE, chains - first) }, (_, i) => first + i);
      const created = wave.map((c) =>
        producer.createWorkflow(chain(...Array.from({ length: steps }, (_, k) => ({ type: 'bench.step', queue, args: [c, k] })))),
      );
      await within(`the creation of ${wave.length} workflow(s)`, waitMs, Promise.all(created));
    }
    await withoutStalling(`${chains} chains of ${steps} steps`, waitMs, () => clock.finished, clock.allFinished());
    return { rate: chains / ((performance.now() - started) / 1000), stepGaps: clock.stepGaps };
  } finally {
    producer.close();
    await cleanUp(`${workers.length} SDK worker(s) stopping`, waitMs, Promise.all(workers.map((worker) => worker.stop())));
  }
}
