import type { RedisServerProcess } from '../../tools/redis-server';

export default async function teardown(): Promise<void> {
  await (globalThis as { ojsTestRedis?: RedisServerProcess }).ojsTestRedis?.destroy();
}
