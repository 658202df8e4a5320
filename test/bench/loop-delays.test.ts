import { describeLoopDelays, loopDelaysSince, LOOP_DELAY_TRACE_OPTIONS } from '../../bench/loop-delays';
import { JsonLinesProcess, type JsonLine } from '../../tools/json-lines-process';

const second = (p99: number, longest: number): JsonLine => ({ msg: 'loop delay', p99, longest });

describe("the benchmark's watch on a process's event loop", () => {
  it('prints, each second, how late a traced process ran its timers: a loop held busy shows at least as long', async () => {
    // The process holds its loop for 300 ms, then idles (a timer keeps it alive) while its lines come.
    const script =
      "const { performance } = require('node:perf_hooks'); setTimeout(() => { const start = performance.now(); while (performance.now() - start < 300); }, 50); setTimeout(() => {}, 60_000)";
    const traced = new JsonLinesProcess('a traced process', process.execPath, ['-e', script], {
      env: { ...process.env, NODE_OPTIONS: LOOP_DELAY_TRACE_OPTIONS },
    });
    try {
      // The second that held the block; the tracer's timer could not run for 300 ms of it.
      const held = await traced.waitFor((line) => line['msg'] === 'loop delay' && Number(line['longest']) > 0, 'a late second');
      expect(Number(held['longest'])).toBeGreaterThanOrEqual(290);
      expect(Number(held['p99'])).toBeLessThanOrEqual(Number(held['longest']));
      expect(loopDelaysSince(traced.lines, 0).longestMs).toBeGreaterThanOrEqual(290);
    } finally {
      await traced.stop('SIGTERM');
    }
  });

  it("reads a window's seconds: the median second's p99, the worst second's, the longest delay", () => {
    const lines: JsonLine[] = [
      second(50, 60), // before the window
      { msg: 'a log line of the process' },
      second(2, 3),
      second(1, 9),
      { msg: 'gc pause', kind: 'young', ms: 4, old: 1 },
      second(4, 5),
      second(3, 4),
    ];
    const delays = loopDelaysSince(lines, 1);
    expect(delays).toEqual({ seconds: 4, medianP99Ms: 2, worstP99Ms: 4, longestMs: 9 });
    expect(describeLoopDelays(delays)).toBe('late by 2.0 ms at p99 in the median second (worst second 4.0 ms), 9.0 ms at the longest');
    expect(describeLoopDelays(loopDelaysSince(lines, lines.length))).toBe('not measured (no whole second traced)');
  });
});
