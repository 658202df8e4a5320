import { RedisServerProcess } from '../../tools/redis-server';

/** Starts the redis-server shared by the Redis project's test files (each test server gets its own prefix). */
export default async function setup(): Promise<void> {
  const redis = await RedisServerProcess.start();
  process.env['OJS_TEST_REDIS_URL'] = redis.url;
  (globalThis as { ojsTestRedis?: RedisServerProcess }).ojsTestRedis = redis;
}
