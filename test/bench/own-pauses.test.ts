import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { performance } from 'node:perf_hooks';
import { OwnPauses } from '../../bench/own-pauses';

// A collection on demand: --expose-gc set at run time gives new contexts a gc().
setFlagsFromString('--expose-gc');
const collect = runInNewContext('gc') as () => void;
/** Node hands a pause to its observers in an immediate after the collection. */
const nextTurn = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

describe('the benchmark process watching its own collector', () => {
  it('tells a span that a pause fell in from one it did not', async () => {
    const pauses = new OwnPauses();
    const quiet = { start: performance.now(), end: performance.now() };
    const start = performance.now();
    collect();
    const end = performance.now();
    await nextTurn();
    pauses.stop();
    expect(pauses.overlaps({ start, end })).toBe(true);
    expect(pauses.overlaps(quiet)).toBe(false);
    expect(pauses.overlaps({ start: end + 1, end: end + 2 })).toBe(false);
  });

  it('sees nothing once stopped', async () => {
    const pauses = new OwnPauses();
    pauses.stop();
    const start = performance.now();
    collect();
    const end = performance.now();
    await nextTurn();
    expect(pauses.overlaps({ start, end })).toBe(false);
  });
});
