import { firstLogPosition, type RecordedFact } from '../../src/domain/event-facts';
import { DEFAULT_EVENT_RETENTION } from '../../src/domain/retention';
import { MemoryJobStore, type MemoryJobStoreOptions } from '../../src/store/memory/memory-job-store';
import type { MemoryTables } from '../../src/store/memory/memory-tables';
import { StoreHarness, T0 } from './store-harness';

const MINUTE = 60_000;
const RETAIN_NOTHING = { completedMs: 0, cancelledMs: 0, discardedMs: 0, maxJobs: 0 };

function jobIdOf(recorded: RecordedFact): string | undefined {
  return recorded.fact.kind === 'job' ? recorded.fact.jobId : undefined;
}

/** What the memory store does exactly where the contract allows a shared store to approximate. */
describe('the memory store event log and throughput', () => {
  let h: StoreHarness;
  let store: MemoryJobStore;
  let tables: MemoryTables;

  function start(options: MemoryJobStoreOptions = {}): void {
    store = new MemoryJobStore(options);
    tables = store['tables'];
    h = new StoreHarness(store);
  }
  afterEach(async () => {
    h.close();
    const problems = await store.audit();
    await store.close();
    if (problems.length > 0) throw new Error(`the store audit found:\n${problems.join('\n')}`);
  });

  const readAll = async () => (await store.readFacts({ limit: 10_000 })).facts;

  it("numbers facts one after the other from the first one's time, whatever the clock does", async () => {
    start();
    for (const at of [T0 + 10, T0 + 5, T0 + 5, T0 + 11]) await store.enqueue([h.job({}, { now: at })]);
    const first = firstLogPosition(T0 + 10);
    expect((await readAll()).map((r) => r.cursor)).toEqual([0, 1, 2, 3].map((n) => String(first + n)));
  });

  it('keeps exactly the newest facts of its count, and a follower left behind resumes at the oldest', async () => {
    start({ events: { maxCount: 3, maxAgeMs: DEFAULT_EVENT_RETENTION.maxAgeMs } });
    const jobs: string[] = [];
    for (let i = 0; i < 5; i++) jobs.push((await h.enqueue({}))[0]!.id);
    const { facts, oldest } = await store.readFacts({ limit: 10 });
    expect(facts.map(jobIdOf)).toEqual(jobs.slice(2));
    expect(oldest).toBe(facts[0]!.cursor);
    const got: RecordedFact[] = [];
    const stop = await store.followFacts('0', (batch) => got.push(...batch));
    // The catch-up is handed over in a microtask queued before the follow resolved.
    expect(got).toEqual(facts);
    stop();
  });

  it('records nothing with a count of 0, and its followers see nothing', async () => {
    start({ events: { maxCount: 0, maxAgeMs: DEFAULT_EVENT_RETENTION.maxAgeMs } });
    const got: RecordedFact[] = [];
    const stop = await store.followFacts(undefined, (batch) => got.push(...batch));
    await h.enqueue({});
    await h.register();
    expect([got, await readAll()]).toEqual([[], []]);
    stop();
  });

  it('keeps its facts within its byte bound, the oldest leaving first, the newest always', async () => {
    start({ maxEventBytes: 2_000 });
    const jobs: string[] = [];
    for (let i = 0; i < 20; i++) jobs.push((await h.enqueue({}))[0]!.id);
    const facts = await readAll();
    expect(facts.length).toBeGreaterThan(1);
    expect(facts.length).toBeLessThan(20);
    expect(facts.map(jobIdOf)).toEqual(jobs.slice(-facts.length));
    expect(tables.log.bytes).toBeLessThanOrEqual(2_000);
    const queues = Array.from({ length: 50 }, (_, i) => `queue-${i}-${'q'.repeat(100)}`);
    const worker = await h.register({ queues });
    expect((await readAll()).map((r) => r.fact)).toEqual([expect.objectContaining({ kind: 'worker', workerId: worker.workerId, queues })]);
  });

  it('prunes exactly the facts older than its age, by their cursor time', async () => {
    start({ events: { maxCount: 100, maxAgeMs: 1_500 } });
    for (const at of [T0, T0 + 1_000, T0 + 2_000]) await store.enqueue([h.job({}, { now: at })]);
    const facts = await readAll();
    expect(await store.pruneFacts(T0 + 2_500)).toBe(1);
    expect(await store.readFacts({ limit: 10 })).toEqual({ facts: facts.slice(1), oldest: facts[1]!.cursor });
    expect(await store.pruneFacts(T0 + 2_500)).toBe(0);
  });

  it('hands facts and signals out once the change is made, never inside another listener, each follower in log order', async () => {
    start();
    const seenByA: (string | undefined)[] = [];
    const seenByB: (string | undefined)[] = [];
    let depth = 0;
    let wasNested = false;
    let second: string | undefined;
    const stopA = await store.followFacts(undefined, (facts) => {
      depth += 1;
      wasNested ||= depth > 1;
      seenByA.push(...facts.map(jobIdOf));
      if (second === undefined) {
        const job = h.job();
        second = job.id;
        // A listener that changes the store: its change is handed out after this batch, to everyone.
        void store.enqueue([job]);
      }
      depth -= 1;
    });
    const stopB = await store.followFacts(undefined, (facts) => seenByB.push(...facts.map(jobIdOf)));
    const [first] = await h.enqueue({});
    expect([seenByA, seenByB]).toEqual([
      [first!.id, second],
      [first!.id, second],
    ]);
    expect(wasNested).toBe(false);
    expect(h.signalsOf('jobsAvailable').reduce((sum, s) => sum + s.count, 0)).toBe(2);
    stopA();
    stopB();
  });

  it("keeps a queue's throughput while it is paused, and drops it with the queue", async () => {
    start();
    const worker = await h.register({ queues: ['q'] });
    await h.enqueue({ queue: 'q' });
    const [claimed] = (await h.claim(worker.workerId, ['q'], 1, T0)).jobs;
    await store.ack({ workerId: worker.workerId, items: [{ jobId: claimed!.id, leaseToken: claimed!.lease!.token }], now: T0 });
    await store.setQueuePaused({ queue: 'q', paused: true, now: T0 });
    expect(await store.pruneTerminal(T0 + 1, RETAIN_NOTHING, 10)).toBe(1);
    expect((await store.queueStats('q', T0 + 1)).minutes.at(-1)).toMatchObject({ completed: 1 });
    await store.setQueuePaused({ queue: 'q', paused: false, now: T0 + 2 });
    expect((await store.queueStats('q', T0 + 2)).minutes.at(-1)).toMatchObject({ completed: 0 });
    expect([...tables.throughput.queues()]).toEqual([]);
  });

  it('never lets a count from an hour back reset the minute its bucket now holds', async () => {
    start();
    const worker = await h.register({ concurrency: 2 });
    await h.enqueue({}, {});
    const jobs = (await h.claim(worker.workerId, ['default'], 2, T0)).jobs;
    const ack = (i: number, now: number) =>
      store.ack({ workerId: worker.workerId, items: [{ jobId: jobs[i]!.id, leaseToken: jobs[i]!.lease!.token }], now });
    await ack(0, T0 + 61 * MINUTE);
    await ack(1, T0 + MINUTE);
    const stats = await store.queueStats('default', T0 + 61 * MINUTE);
    expect(stats.minutes.at(-1)).toEqual({ minute: T0 + 61 * MINUTE, completed: 1, failed: 0, discarded: 0 });
    expect(stats.minutes.reduce((sum, m) => sum + m.completed, 0)).toBe(1);
  });
});
