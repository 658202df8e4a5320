import { DEFAULT_PAGE_SIZE } from '../../../src/domain/paging';
import { AppHarness } from './app-harness';

describe('QueueAdmin.countsForMetrics', () => {
  let h: AppHarness;
  beforeEach(() => (h = new AppHarness()));
  afterEach(() => h.stop());

  /** `n` queues, each holding one available job, named so that name order is creation order. */
  async function queues(n: number): Promise<string[]> {
    const names = Array.from({ length: n }, (_, i) => `q-${String(i).padStart(4, '0')}`);
    for (const queue of names) await h.enqueue({ queue });
    return names;
  }

  it('reads every queue, a page at a time, in name order', async () => {
    const names = await queues(DEFAULT_PAGE_SIZE + 20);
    const counts = await h.app.queues.countsForMetrics();
    expect(counts.map((c) => c.queue)).toEqual(names);
    expect(counts[0]).toMatchObject({ available: 1, active: 0, discarded: 0 });
  });

  it('stops at the cap, however many queues there are', async () => {
    const names = await queues(DEFAULT_PAGE_SIZE + 20);
    expect((await h.app.queues.countsForMetrics(DEFAULT_PAGE_SIZE + 5)).map((c) => c.queue)).toEqual(names.slice(0, DEFAULT_PAGE_SIZE + 5));
    expect((await h.app.queues.countsForMetrics(3)).map((c) => c.queue)).toEqual(names.slice(0, 3));
  });
});
