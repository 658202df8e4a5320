import { Redis } from 'ioredis';
import { RedisServerProcess, type RedisServerOptions } from '../../tools/redis-server';

/** A redis-server of a test file's own and a client connected to it: for tests that talk to Redis directly. */
export interface RedisWithClient {
  redis: RedisServerProcess;
  client: Redis;
}

/** Starts the server and connects the client; a client that cannot connect stops the server it started. */
export async function startRedisWithClient(options: RedisServerOptions = {}): Promise<RedisWithClient> {
  const redis = await RedisServerProcess.start(options);
  const client = new Redis(redis.url, { lazyConnect: true });
  try {
    await client.connect();
  } catch (error) {
    client.disconnect();
    await redis.destroy();
    throw error;
  }
  return { redis, client };
}

/** Disconnects the client and destroys the server, whichever of them a failed start left unset. */
export async function stopRedisWithClient({ redis, client }: Partial<RedisWithClient>): Promise<void> {
  client?.disconnect();
  await redis?.destroy();
}
