import { BeatBatcher } from '../../../src/app/beat-batcher';
import type { BeatParams } from '../../../src/store/job-store';
import { AppHarness } from './app-harness';

describe('beats recorded together (BeatBatcher)', () => {
  let h: AppHarness;
  const ids = Array.from({ length: 20 }, (_, i) => `w${i}`);
  const beat = (workerId: string): BeatParams => ({
    workerId,
    sequence: 1,
    activeJobIds: [],
    now: h.clock.now(),
    expected: { state: 'running' },
    next: { state: 'running' },
  });

  beforeEach(async () => {
    h = new AppHarness();
    for (const id of ids) await h.register(id);
  });
  afterEach(() => h.stop());

  it('holds the beats that arrive while a store call runs, and records them together once it ends', async () => {
    const batcher = new BeatBatcher(h.store);
    const recordBeats = h.store.recordBeats.bind(h.store);
    let started!: () => void;
    const isStarted = new Promise<void>((resolve) => (started = resolve));
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    const calls = jest.spyOn(h.store, 'recordBeats').mockImplementationOnce(async (beats) => {
      started();
      await gate;
      return recordBeats(beats);
    });

    const first = batcher.record(beat(ids[0]!));
    await isStarted;
    const rest = ids.slice(1).map((id) => batcher.record(beat(id)));
    // A turn of the event loop: when the held beats would have gone on their own.
    await new Promise(setImmediate);
    expect(calls).toHaveBeenCalledTimes(1);
    release();

    const outcomes = await Promise.all([first, ...rest]);
    expect(calls).toHaveBeenCalledTimes(2);
    expect(calls.mock.calls[1]![0].map((params) => params.workerId)).toEqual(ids.slice(1));
    expect(outcomes.map((outcome) => outcome.result)).toEqual(ids.map(() => 'applied'));
  });

  it('records the beats of one turn in one call when the store is idle', async () => {
    const batcher = new BeatBatcher(h.store);
    const calls = jest.spyOn(h.store, 'recordBeats');
    await Promise.all(ids.map((id) => batcher.record(beat(id))));
    expect(calls).toHaveBeenCalledTimes(1);
  });

  it('makes the next call no sooner than its spacing after the last, with every beat that arrived meanwhile', async () => {
    let now = 1_000;
    const timers: { at: number; run: () => void }[] = [];
    const pacing = { spacingMs: 10, now: () => now, after: (ms: number, run: () => void) => void timers.push({ at: now + ms, run }) };
    const batcher = new BeatBatcher(h.store, pacing);
    const calls = jest.spyOn(h.store, 'recordBeats');
    const batchSizes = (): number[] => calls.mock.calls.map(([beats]) => beats.length);

    await batcher.record(beat(ids[0]!));
    now += 3;
    const next = [batcher.record(beat(ids[1]!)), batcher.record(beat(ids[2]!))];
    await new Promise(setImmediate);
    now += 3;
    next.push(batcher.record(beat(ids[3]!)));
    await new Promise(setImmediate);
    expect(batchSizes()).toEqual([1]);
    expect(timers.map(({ at }) => at)).toEqual([1_010]);

    now = timers[0]!.at;
    timers[0]!.run();
    await Promise.all(next);
    expect(batchSizes()).toEqual([1, 3]);
    // Long after the last call, a lone beat goes at once.
    now += 60_000;
    await batcher.record(beat(ids[4]!));
    expect(batchSizes()).toEqual([1, 3, 1]);
    expect(timers).toHaveLength(1);
  });
});
