import { describePauses, gcPausesSince, GC_TRACE_OPTIONS } from '../../bench/gc-pauses';
import { JsonLinesProcess } from '../../tools/json-lines-process';

describe("the benchmark's count of a process's collections", () => {
  it('reads the pauses a traced process prints, young and old generation apart, among its other lines', async () => {
    // Young-generation collections that promote 200,000 objects kept alive (some megabytes) to the old
    // generation, one collection of the whole heap, asked for, each in a turn of its own (the pauses are
    // printed between turns); then a line of its own.
    const script = [
      'const turn = () => new Promise((resolve) => setTimeout(resolve, 0));',
      '(async () => {',
      "  const kept = []; gc({ type: 'minor' }); await turn();",
      "  for (let i = 0; i < 200000; i++) kept.push({ i }); gc({ type: 'minor' }); await turn();",
      "  gc({ type: 'minor' }); await turn(); gc(); await turn();",
      "  console.log(JSON.stringify({ msg: 'done', kept: kept.length }));",
      '})();',
    ].join('\n');
    const traced = new JsonLinesProcess('a traced process', process.execPath, ['--expose-gc', '-e', script], {
      env: { ...process.env, NODE_OPTIONS: GC_TRACE_OPTIONS },
    });
    await traced.waitFor((line) => line['msg'] === 'done', '"done"');
    await traced.exited;

    const pauses = gcPausesSince(traced.lines, 0);
    // At least: starting Node may collect on its own.
    expect(pauses.young.count).toBeGreaterThanOrEqual(3);
    expect(pauses.promotedBytes).toBeGreaterThan(2 ** 20);
    expect(pauses.old.count).toBeGreaterThanOrEqual(1);
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
    expect(describePauses(pauses, 1)).toMatch(
      /^\d+ young-generation pauses?, \d+ ms in all \(longest [\d.]+ ms\), promoting [\d.]+ MB\/s; \d+ old-generation \(longest [\d.]+ ms\)$/,
    );
  });
});
