import { FactFollower } from '../../../src/store/redis/fact-follower';
import type { FactLogPage } from '../../../src/store/redis/scripts/read-facts';

/** Every promise continuation queued so far has run (they all run before the next macrotask). */
const settled = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

describe('FactFollower', () => {
  it('opens no connection once closed, even when a read was in flight at close', async () => {
    // The loop's first read (where the log ends) is held at a gate; the store closes meanwhile.
    let release: (page: FactLogPage) => void = () => {};
    const gate = new Promise<FactLogPage>((resolve) => {
      release = resolve;
    });
    let opened = 0;
    const follower = new FactFollower({
      key: 'facts',
      blockMs: 1_000,
      pageSize: 10,
      read: (after) => (after === undefined ? gate : Promise.resolve({ facts: [], newest: '5', isComplete: true })),
      open: () => {
        opened += 1;
        throw new Error('a connection was opened after close');
      },
    });
    await follower.follow('5', () => {});
    follower.close();
    release({ facts: [], newest: '5', isComplete: true });
    await settled();
    // A connection opened now would outlive the store: reconnecting for ever, it kept a test run from exiting.
    expect(opened).toBe(0);
  });
});
