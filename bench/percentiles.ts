export interface Percentiles {
  p50: number;
  p99: number;
}

export function percentiles(samples: number[]): Percentiles {
  const sorted = samples.toSorted((a, b) => a - b);
  const at = (q: number): number => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]!;
  return { p50: at(0.5), p99: at(0.99) };
}

/** Samples `measure` after discarding `warmup` runs (JIT and connection set-up). */
export async function sample(count: number, warmup: number, measure: (i: number) => Promise<number>): Promise<Percentiles> {
  const samples: number[] = [];
  for (let i = 0; i < warmup + count; i++) {
    const ms = await measure(i);
    if (i >= warmup) samples.push(ms);
  }
  return percentiles(samples);
}
