import { bareStreamsCost, bareUnaryCost } from '../../bench/grpc-floors';
import { leastServerCost } from '../../bench/least-server-floor';
import { redisBeatCost, redisBeatInstructions, redisLifecycleCosts, redisLifecycleInstructions } from '../../bench/redis-floors';

describe("the benchmark's floors", () => {
  it('run both Redis lifecycles to the end: every claimed job of an earlier round is completed', async () => {
    // Round k acknowledges the claim of round k - 4 (four workers take turns): 8 rounds complete 4 claims of 200.
    const { ojs, minimal } = await redisLifecycleCosts(8);
    for (const cost of [ojs, minimal]) {
      expect(cost.completed).toBe(4 * 200);
      expect(cost.enqueue + cost.claim + cost.ack).toBeGreaterThan(0);
      // The functions' commands are part of their time, never all of it.
      expect(cost.commands).toBeGreaterThan(0);
      expect(cost.commands).toBeLessThan(cost.enqueue + cost.claim + cost.ack);
      expect(cost.process).toBeGreaterThan(0);
    }
  });

  it('run the batched load through the least server to the end, every job completed once', async () => {
    // Five batches of 200 for four workers taking up to 200 each: claims wait for acks and for enqueues, both.
    const cost = await leastServerCost(1_000);
    expect(cost.completed).toBe(1_000);
    expect(cost.rate).toBeGreaterThan(0);
    // CPU is counted in ticks of 10 ms, which a thousand jobs may not reach.
    for (const micros of [cost.clientMicros, cost.serverMicros, cost.redisMicros]) expect(micros).toBeGreaterThanOrEqual(0);
  });

  it('record beats of a fleet that goes round more than once, every beat applied', async () => {
    // 50 workers, 50 beats a call (BEATS_PER_CALL): the warm-up's call and 10 measured calls take each worker round 11 times.
    const cost = await redisBeatCost(10, 50);
    expect(cost.call).toBeGreaterThan(0);
    expect(cost.commands).toBeGreaterThan(0);
    expect(cost.commands).toBeLessThan(cost.call);
    // CPU is counted in ticks of 10 ms, which 500 beats may not reach.
    expect(cost.process).toBeGreaterThanOrEqual(0);
  });

  it('count the instructions of both Redis lifecycles under callgrind, per job of each step, to the end', async () => {
    // Six rounds: the last two acknowledge the claims of the first two. Batches of 20 after 5, not 200 after 100: valgrind is slow.
    const { ojs, minimal } = await redisLifecycleInstructions(6, { batchSize: 20, backlogBatches: 5 });
    for (const counted of [ojs, minimal]) {
      expect(counted.completed).toBe(2 * 20);
      // No step runs on Redis for nothing, nor without its own work: the backlog and warm-up are not counted.
      for (const step of [counted.enqueue, counted.claim, counted.ack]) {
        expect(step).toBeGreaterThan(1_000);
        expect(step).toBeLessThan(10_000_000);
      }
    }
    // OJS's functions do all the minimal lifecycle does, and more.
    expect(ojs.enqueue + ojs.claim + ojs.ack).toBeGreaterThan(minimal.enqueue + minimal.claim + minimal.ack);
    // Redis runs its measured calls some fifty times slower under callgrind, and each step costs two callgrind_control runs.
  }, 60_000);

  it('count the instructions of beats under callgrind', async () => {
    const perBeat = await redisBeatInstructions(5, 50);
    expect(perBeat).toBeGreaterThan(1_000);
    expect(perBeat).toBeLessThan(10_000_000);
  });

  it('time round trips of a bare gRPC server, which it stops', async () => {
    const cost = await bareUnaryCost(20);
    expect(cost.calls).toBe(20);
    expect(cost.p50).toBeGreaterThan(0);
    expect(cost.serverMicros).toBeGreaterThanOrEqual(0);
  });

  it('time round trips of a bare gRPC server with several under way at once, every call counted once', async () => {
    // 23 calls in 5 loops: 4, 4, 5, 5 and 5.
    const cost = await bareUnaryCost(23, 5);
    expect(cost.calls).toBe(23);
    expect(cost.p50).toBeGreaterThan(0);
  });

  it.each(['grpc-js', 'nice-grpc'] as const)(
    'hold streams on a bare gRPC server on %s and measure what it spends answering the beating ones',
    async (library) => {
      // Two connections; ten streams beat every 50 ms: the window sees about a hundred of their messages answered.
      const cost = await bareStreamsCost(library, { streams: 20, beating: 10, intervalMs: 50, perConnection: 10, windowMs: 500 });
      expect(cost.answeredPerSecond).toBeGreaterThan(0);
      // CPU is counted in ticks of 10 ms, which a window this short may not reach.
      expect(cost.microsPerMessage).toBeGreaterThanOrEqual(0);
      expect(Number.isFinite(cost.rssPerStreamBytes)).toBe(true);
      // The cost carries the bare server's collector pauses, from its own trace (a window this short may hold none).
      expect(cost.gc.young.count).toBeGreaterThanOrEqual(0);
      expect(cost.gc.young.totalMs).toBeGreaterThanOrEqual(0);
    },
  );
});
