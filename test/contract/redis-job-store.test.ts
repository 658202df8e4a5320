import { RedisJobStore } from '../../src/store/redis/redis-job-store';
import { RedisServerProcess, testPrefix } from '../../tools/redis-server';
import { describeJobStoreContract } from './job-store-contract';
import { describeScheduleStoreContract } from './schedule-store-contract';
import { describeWorkflowStoreContract } from './workflow-store-contract';

let redis: RedisServerProcess;
beforeAll(async () => {
  redis = await RedisServerProcess.start();
});
afterAll(() => redis.destroy());

describeJobStoreContract('redis', { create: (options) => RedisJobStore.connect({ url: redis.url, prefix: testPrefix(), ...options }) });
describeScheduleStoreContract('redis', { create: () => RedisJobStore.connect({ url: redis.url, prefix: testPrefix() }) });
describeWorkflowStoreContract('redis', { create: () => RedisJobStore.connect({ url: redis.url, prefix: testPrefix() }) });
