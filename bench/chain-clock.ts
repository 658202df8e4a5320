import { performance } from 'node:perf_hooks';
import { within, withoutStalling } from './deadline';

/**
 * What a chain benchmark measures, the same for both systems: chains
 * finished per second, and the time each step added, from the handler of
 * step k returning to the handler of step k+1 starting (the settle, the
 * advance and the delivery in between; the handlers do nothing).
 */
export interface ChainResult {
  /** Chains whose last step finished, per second, from the first creation. */
  rate: number;
  /** Milliseconds between consecutive steps, every gap of every chain. */
  stepGaps: number[];
}

/** The handlers' side of a chain run: they report each step's start and end; the run waits for every chain. */
export class ChainClock {
  readonly stepGaps: number[] = [];
  finished = 0;
  private readonly ends: Float64Array;
  private readonly done: Promise<void>;
  private resolveDone!: () => void;
  private readonly waiters: { count: number; resolve: () => void }[] = [];

  constructor(
    readonly chains: number,
    readonly steps: number,
  ) {
    this.ends = new Float64Array(chains * steps);
    this.done = new Promise((resolve) => (this.resolveDone = resolve));
  }

  /** A handler started step `step` of chain `chain`. */
  started(chain: number, step: number): void {
    if (step > 0) this.stepGaps.push(performance.now() - this.ends[chain * this.steps + step - 1]!);
  }

  /** A handler is about to return from step `step` of chain `chain`. */
  ended(chain: number, step: number): void {
    this.ends[chain * this.steps + step] = performance.now();
    if (step !== this.steps - 1) return;
    this.finished += 1;
    if (this.finished === this.chains) this.resolveDone();
    for (const waiter of this.waiters.filter((w) => w.count <= this.finished)) {
      this.waiters.splice(this.waiters.indexOf(waiter), 1);
      waiter.resolve();
    }
  }

  /** Resolves when every chain's last step has ended. */
  allFinished(): Promise<void> {
    return this.done;
  }

  /** Resolves when `count` chains have finished. */
  finishedUpTo(count: number): Promise<void> {
    if (this.finished >= count) return Promise.resolve();
    return new Promise((resolve) => this.waiters.push({ count, resolve }));
  }
}

/** How many chains a run creates at once: one at a time (what a step adds to an idle system), or all of them. */
export const CHAIN_WAVES = { idle: 1, load: 50 } as const;

/**
 * Creates chains 0..chains-1, `wave` at a time, each wave after the chains
 * of the one before have finished (all at once when `wave` is the load's:
 * waves follow each other as soon as they are created), and waits for the
 * last chain to finish.
 */
export async function driveChains(
  clock: ChainClock,
  wave: number,
  waitMs: number,
  create: (chains: number[]) => Promise<unknown>,
): Promise<void> {
  const isIdle = wave === CHAIN_WAVES.idle;
  for (let first = 0; first < clock.chains; first += wave) {
    const numbers = Array.from({ length: Math.min(wave, clock.chains - first) }, (_, i) => first + i);
    await within(`the creation of ${numbers.length} chain(s)`, waitMs, create(numbers));
    if (isIdle) await withoutStalling(`chain ${first}`, waitMs, () => clock.finished, clock.finishedUpTo(first + numbers.length));
  }
  await withoutStalling(`${clock.chains} chains of ${clock.steps} steps`, waitMs, () => clock.finished, clock.allFinished());
}
