import { describePauses, gcPausesSince, GC_TRACE_OPTIONS } from '../../bench/gc-pauses';
import { JsonLinesProcess } from '../../tools/json-lines-process';

describe("the benchmark's count of a process's collections", () => {
  it('reads the pauses a traced process prints, young and old generation apart, among its other lines', async () => {
    // Two young-generation collections and one of the whole heap, asked for; then a line of its own.
    const script = "gc({ type: 'minor' }); gc({ type: 'minor' }); gc(); setImmediate(() => console.log(JSON.stringify({ msg: 'done' })))";
    const traced = new JsonLinesProcess('a traced process', process.execPath, ['--expose-gc', '-e', script], {
      env: { ...process.env, NODE_OPTIONS: GC_TRACE_OPTIONS },
    });
    await traced.waitFor((line) => line['msg'] === 'done', '"done"');
    await traced.exited;

    const pauses = gcPausesSince(traced.lines, 0);
    // At least: starting Node may collect on its own.
    expect(pauses.young.count).toBeGreaterThanOrEqual(2);
    expect(pauses.old.count).toBeGreaterThanOrEqual(1);
    for (const kind of [pauses.young, pauses.old]) {
      expect(kind.longestMs).toBeGreaterThan(0);
      expect(kind.totalMs).toBeGreaterThanOrEqual(kind.longestMs);
    }
    // Only what follows the index counts.
    expect(gcPausesSince(traced.lines, traced.lines.length)).toEqual({
      young: { count: 0, totalMs: 0, longestMs: 0 },
      old: { count: 0, totalMs: 0, longestMs: 0 },
    });
    expect(describePauses(pauses)).toMatch(
      /^\d+ young-generation pauses?, \d+ ms in all \(longest [\d.]+ ms\); \d+ old-generation \(longest [\d.]+ ms\)$/,
    );
  });
});
