import type { Percentiles } from './percentiles';

/** How the benchmark prints a whole number (10,000) and a share (30.6%). */
export const count = (n: number): string => n.toLocaleString('en-US');
export const pct = (fraction: number): string => `${(fraction * 100).toFixed(1)}%`;

/** "p50 …, p99 …", as the benchmark prints latency. */
export const ms = (p: Percentiles): string => `p50 ${p.p50.toFixed(2)} ms, p99 ${p.p99.toFixed(2)} ms`;
