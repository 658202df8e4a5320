import { DueLoop } from '../../../src/background/due-loop';
import { ManualClock } from '../../support/manual-clock';
import { RecordingLogger } from '../../support/silent-logger';

/** The manual clock's start. */
const T0 = Date.parse('2026-01-01T00:00:00.000Z');

/**
 * A loop whose task answers from a script of next due times (or throws), and
 * which counts its runs; `run(n)` resolves once the n-th run has started.
 */
function scriptedLoop(answers: (number | undefined | Error | Promise<number | undefined>)[], idleMs = 3_600_000, minSpacingMs = 0) {
  const clock = new ManualClock();
  const logger = new RecordingLogger();
  let runs = 0;
  const waiting: { n: number; resolve: () => void }[] = [];
  const loop = new DueLoop({
    name: 'test',
    idleMs,
    minSpacingMs,
    clock,
    logger,
    runOnce: async () => {
      runs += 1;
      for (const waiter of waiting.filter((w) => w.n <= runs)) {
        waiting.splice(waiting.indexOf(waiter), 1);
        waiter.resolve();
      }
      const answer = answers.shift();
      if (answer instanceof Error) throw answer;
      return answer;
    },
  });
  const run = (n: number): Promise<void> => (runs >= n ? Promise.resolve() : new Promise((resolve) => waiting.push({ n, resolve })));
  return { clock, logger, loop, run, runs: () => runs };
}

/** A run's answer that comes only when the test gives it: the run stays under way until then. */
function heldAnswer(): { answer: Promise<number | undefined>; give: (next: number | undefined) => void } {
  let give!: (next: number | undefined) => void;
  const answer = new Promise<number | undefined>((resolve) => (give = resolve));
  return { answer, give };
}

/** Lets the loop's pending promise callbacks run. */
const settle = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

describe('DueLoop', () => {
  it('runs at once, then at the time its last run said the next thing falls due', async () => {
    const t = scriptedLoop([T0 + 1_000, undefined]);
    t.loop.start();
    await t.run(1);
    await settle();
    t.clock.advance(999);
    await settle();
    expect(t.runs()).toBe(1);
    t.clock.advance(1);
    await t.run(2);
    await t.loop.stop();
  });

  it('runs sooner for a time announced before the one it planned, and not for a later one', async () => {
    const t = scriptedLoop([T0 + 10_000, undefined]);
    t.loop.start();
    await t.run(1);
    await settle();
    t.loop.dueAt(T0 + 20_000);
    t.loop.dueAt(T0 + 1_000);
    t.clock.advance(1_000);
    await t.run(2);
    t.clock.advance(20_000);
    await settle();
    expect(t.runs()).toBe(2);
    await t.loop.stop();
  });

  it('keeps a time announced while it runs for after the run', async () => {
    const held = heldAnswer();
    const t = scriptedLoop([held.answer, undefined]);
    t.loop.start();
    await t.run(1);
    t.loop.dueAt(T0 + 500);
    held.give(undefined);
    await settle();
    expect(t.runs()).toBe(1);
    t.clock.advance(500);
    await t.run(2);
    await t.loop.stop();
  });

  it('runs again after its idle interval when nothing is due, and after a failed run', async () => {
    const t = scriptedLoop([undefined, new Error('store away'), undefined], 5);
    t.loop.start();
    await t.run(3);
    expect(t.logger.entries.map((e) => [e.level, (e.context as { loop?: string }).loop])).toEqual([['error', 'test']]);
    await t.loop.stop();
  });

  it('runs no sooner than its spacing after the last run, however much is due', async () => {
    const t = scriptedLoop([T0, T0], 3_600_000, 3_600_000);
    t.loop.start();
    await t.run(1);
    await settle();
    t.loop.dueAt(T0);
    t.clock.advance(1_000);
    await settle();
    expect(t.runs()).toBe(1);
    await t.loop.stop();
  });

  it('waits for a run under way when stopped, and runs no more', async () => {
    const held = heldAnswer();
    const t = scriptedLoop([held.answer], 5);
    t.loop.start();
    await t.run(1);
    const stopped = t.loop.stop();
    t.loop.dueAt(T0);
    held.give(T0);
    await stopped;
    t.clock.advance(1_000);
    await settle();
    expect(t.runs()).toBe(1);
  });
});
