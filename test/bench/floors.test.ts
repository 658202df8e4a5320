import { bareUnaryCost } from '../../bench/grpc-floors';
import { redisLifecycleCosts } from '../../bench/redis-floors';
import { RedisServerProcess } from '../../tools/redis-server';

describe("the benchmark's floors", () => {
  it('run both Redis lifecycles to the end: every claimed job of an earlier round is completed', async () => {
    // Round k acknowledges the claim of round k - 4 (four workers take turns): 8 rounds complete 4 claims of 200.
    const { ojs, minimal } = await redisLifecycleCosts(() => RedisServerProcess.start(), 8);
    for (const cost of [ojs, minimal]) {
      expect(cost.completed).toBe(4 * 200);
      expect(cost.enqueue + cost.claim + cost.ack).toBeGreaterThan(0);
      expect(cost.process).toBeGreaterThan(0);
    }
  });

  it('time round trips of a bare gRPC server, which it stops', async () => {
    const cost = await bareUnaryCost(20);
    expect(cost.p50).toBeGreaterThan(0);
    expect(cost.serverMicros).toBeGreaterThanOrEqual(0);
  });
});
