import { useEffect, useRef } from 'preact/hooks';
import uPlot from 'uplot';

/** Jobs a minute over the last hour, all queues added up. */
export interface Throughput {
  /** Minute starts, epoch milliseconds. */
  minutes: number[];
  completed: number[];
  failed: number[];
  discarded: number[];
}

const SERIES = [
  { label: 'completed', stroke: '#2e7d32' },
  { label: 'failed', stroke: '#ef6c00' },
  { label: 'discarded', stroke: '#c62828' },
];

function total(values: number[]): number {
  return values.reduce((a, b) => a + b, 0);
}

/** The chart (uPlot, drawn on a canvas), with the same numbers in a table for screen readers. */
export function ThroughputChart({ throughput }: { throughput: Throughput }) {
  const box = useRef<HTMLDivElement>(null);
  const plot = useRef<uPlot | null>(null);
  const data: uPlot.AlignedData = [throughput.minutes.map((m) => m / 1000), throughput.completed, throughput.failed, throughput.discarded];
  useEffect(() => {
    const element = box.current!;
    const width = (): number => Math.max(280, element.clientWidth);
    plot.current = new uPlot(
      { width: width(), height: 220, series: [{}, ...SERIES.map((s) => ({ ...s, width: 2 }))], axes: [{}, { label: 'jobs / min' }] },
      data,
      element,
    );
    const resized = (): void => plot.current?.setSize({ width: width(), height: 220 });
    addEventListener('resize', resized);
    return () => {
      removeEventListener('resize', resized);
      plot.current?.destroy();
      plot.current = null;
    };
  }, []);
  useEffect(() => plot.current?.setData(data), [throughput]);
  return (
    <figure class="chart">
      <div ref={box} aria-hidden="true" />
      <figcaption data-testid="throughput-totals">
        Last hour: {total(throughput.completed)} completed, {total(throughput.failed)} failed, {total(throughput.discarded)} discarded
      </figcaption>
    </figure>
  );
}
