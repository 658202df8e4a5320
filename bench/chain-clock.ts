import { performance } from 'node:perf_hooks';

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
    if (step === this.steps - 1 && ++this.finished === this.chains) this.resolveDone();
  }

  /** Resolves when every chain's last step has ended. */
  allFinished(): Promise<void> {
    return this.done;
  }
}
