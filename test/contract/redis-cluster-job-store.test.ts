import { RedisJobStore } from '../../src/store/redis/redis-job-store';
import { RedisClusterProcesses, testPrefix } from '../../tools/redis-server';
import { describeJobStoreContract } from './job-store-contract';
import { describeScheduleStoreContract } from './schedule-store-contract';
import { describeWorkflowStoreContract } from './workflow-store-contract';

// Three masters built with `redis-cli --cluster create`; every script (the audit too) must touch one slot.
let cluster: RedisClusterProcesses;
beforeAll(async () => {
  cluster = await RedisClusterProcesses.start();
}, 60_000);
afterAll(() => cluster.destroy());

describeJobStoreContract('redis cluster', {
  create: (options) => RedisJobStore.connect({ url: cluster.url, prefix: testPrefix(), ...options }),
});
describeScheduleStoreContract('redis cluster', { create: () => RedisJobStore.connect({ url: cluster.url, prefix: testPrefix() }) });
describeWorkflowStoreContract('redis cluster', { create: () => RedisJobStore.connect({ url: cluster.url, prefix: testPrefix() }) });
