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
});
