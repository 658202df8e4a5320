/** How the benchmark prints a whole number (10,000) and a share (30.6%). */
export const count = (n: number): string => n.toLocaleString('en-US');
export const pct = (fraction: number): string => `${(fraction * 100).toFixed(1)}%`;
