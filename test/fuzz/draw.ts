import { seededRandom } from '../support/seeded-random';

/** Seeded choices for the fuzzer: the same seed makes the same choices in the same order. */
export class Draw {
  private readonly random: () => number;

  constructor(readonly seed: number) {
    this.random = seededRandom(seed);
  }

  /** An integer from `min` to `max`, both included. */
  int(min: number, max: number): number {
    return min + Math.floor(this.random() * (max - min + 1));
  }

  chance(probability: number): boolean {
    return this.random() < probability;
  }

  pick<T>(items: readonly T[]): T {
    if (items.length === 0) throw new Error('nothing to pick from');
    return items[this.int(0, items.length - 1)]!;
  }

  /** One of `choices`, each as likely as its weight. */
  weighted<T>(choices: readonly [number, () => T][]): T {
    const total = choices.reduce((sum, [weight]) => sum + weight, 0);
    let at = this.random() * total;
    for (const [weight, choose] of choices) {
      at -= weight;
      if (at < 0) return choose();
    }
    return choices[choices.length - 1]![1]();
  }

  bytes(length: number): Uint8Array {
    return Uint8Array.from({ length }, () => this.int(0, 255));
  }

  /** A seed for a generator of its own (fast-check's, for one sample). */
  seedForSample(): number {
    return this.int(0, 2 ** 31 - 1);
  }

  /** A lowercase UUIDv7 made of drawn bits (a valid job id nobody holds). */
  uuidv7(): string {
    const hex = (n: number) => Array.from({ length: n }, () => this.int(0, 15).toString(16)).join('');
    return `${hex(8)}-${hex(4)}-7${hex(3)}-${this.pick(['8', '9', 'a', 'b'])}${hex(3)}-${hex(12)}`;
  }
}
