import { functionLibrary } from '../../src/store/redis/function-library';
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

describe('the scripts function library on Redis Cluster', () => {
  it('is loaded on every master when the one asked lacks it, since the deployment slot may move', async () => {
    const store = await RedisJobStore.connect({ url: cluster.url, prefix: testPrefix() });
    const { name } = functionLibrary();
    try {
      await Promise.all(cluster.nodes.map((node) => node.cli('function', 'flush')));
      expect(await store.getJob('none')).toBeUndefined();
      for (const node of cluster.nodes) expect(await node.cli('function', 'list', 'libraryname', name)).toContain(name);
    } finally {
      await store.close();
    }
  });
});
