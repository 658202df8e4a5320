import type { RedisServerProcess } from './redis-server';

export default async function teardown(): Promise<void> {
  await (globalThis as { ojsTestRedis?: RedisServerProcess }).ojsTestRedis?.destroy();
}
