import { performance } from 'node:perf_hooks';
import { chain, Producer, Worker } from '../packages/sdk/src';
import { ChainClock, driveChains, type ChainResult } from './chain-clock';
import { cleanUp, within, WAIT_MS } from './deadline';
import { benchLogger } from './ojs-bench';
import { SHAPE } from './shape';

/**
 * Chains of `steps` no-op jobs through the SDK, written as a user would:
 * `producer.createWorkflow(chain(...))`, SDK workers with the throughput
 * runs' shape running every step. Chains are created `wave` at a time,
 * each wave once the one before has finished (CHAIN_WAVES.idle: one chain
 * at a time, what a step adds on an idle server) or at once
 * (CHAIN_WAVES.load); the run ends when every chain's last step has run.
 */
export async function ojsChains(
  address: string,
  chains: number,
  steps: number,
  wave: number,
  run: string,
  waitMs = WAIT_MS,
): Promise<ChainResult> {
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
    await driveChains(clock, wave, waitMs, (numbers) =>
      Promise.all(
        numbers.map((c) =>
          producer.createWorkflow(chain(...Array.from({ length: steps }, (_, k) => ({ type: 'bench.step', queue, args: [c, k] })))),
        ),
      ),
    );
    return { rate: chains / ((performance.now() - started) / 1000), stepGaps: clock.stepGaps };
  } finally {
    producer.close();
    await cleanUp(`${workers.length} SDK worker(s) stopping`, waitMs, Promise.all(workers.map((worker) => worker.stop())));
  }
}
