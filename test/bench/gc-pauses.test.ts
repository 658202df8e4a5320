import { describePauses, gcPausesSince, GC_TRACE_OPTIONS } from '../../bench/gc-pauses';
import { JsonLinesProcess, type JsonLine } from '../../tools/json-lines-process';

const pause = (kind: 'young' | 'old', ms: number, old: number): JsonLine => ({ msg: 'gc pause', kind, ms, old });

describe("the benchmark's count of a process's collections", () => {
  it('reads the pauses a traced process prints, young and old generation apart, among its other lines', async () => {
    // Young-generation collections and one of the whole heap, asked for; then a line of its own.
    const script = "gc({ type: 'minor' }); gc({ type: 'minor' }); gc(); setImmediate(() => console.log(JSON.stringify({ msg: 'done' })))";
    const traced = new JsonLinesProcess('a traced process', process.execPath, ['--expose-gc', '-e', script], {
      env: { ...process.env, NODE_OPTIONS: GC_TRACE_OPTIONS },
    });
    await traced.waitFor((line) => line['msg'] === 'done', '"done"');
    await traced.exited;

    const printed = traced.lines.filter((line) => line['msg'] === 'gc pause');
    // Each line says what the old generation held as it was written.
    for (const line of printed) expect(Number(line['old'])).toBeGreaterThan(0);
    const pauses = gcPausesSince(traced.lines, 0);
    // At least: starting Node may collect on its own.
    expect(pauses.young.count).toBeGreaterThanOrEqual(2);
    expect(pauses.old.count).toBeGreaterThanOrEqual(1);
    expect(pauses.young.count + pauses.old.count).toBe(printed.length);
    for (const kind of [pauses.young, pauses.old]) {
      expect(kind.longestMs).toBeGreaterThan(0);
      expect(kind.totalMs).toBeGreaterThanOrEqual(kind.longestMs);
    }
    // Only what follows the index counts.
    expect(gcPausesSince(traced.lines, traced.lines.length)).toEqual({
      young: { count: 0, totalMs: 0, longestMs: 0 },
      old: { count: 0, totalMs: 0, longestMs: 0 },
      promotedBytes: 0,
    });
  });

  it('sums what the old generation gained from one young pause to the next, never across an old one', () => {
    const lines: JsonLine[] = [
      { msg: 'a log line of the process' },
      pause('young', 1, 10),
      pause('young', 2, 15), // +5
      pause('old', 30, 4), // a whole-heap collection: the next young pause starts afresh
      pause('young', 1, 7),
      { msg: 'another log line' },
      pause('young', 4, 9), // +2
    ];
    const pauses = gcPausesSince(lines, 0);
    expect(pauses).toEqual({
      young: { count: 4, totalMs: 8, longestMs: 4 },
      old: { count: 1, totalMs: 30, longestMs: 30 },
      promotedBytes: 7,
    });
    expect(gcPausesSince(lines, 3).promotedBytes).toBe(2);
    expect(describePauses({ ...pauses, promotedBytes: 3 * 2 ** 20 }, 2)).toBe(
      '4 young-generation pauses, 8 ms in all (longest 4.0 ms), promoting 1.50 MB/s; 1 old-generation (longest 30.0 ms)',
    );
  });
});
