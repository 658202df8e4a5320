import { createHash } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Status } from 'nice-grpc';
import { rpcError } from '../support/rpc-error';
import { TestServer, type Clients } from '../support/test-server';

const sha256 = (token: string): string => createHash('sha256').update(token).digest('hex');
const SECOND = { seconds: 1, nanos: 0 };

/** An operator of one queue, an operator of every queue, and a producer and worker without the operator role. */
const PRINCIPALS = {
  principals: [
    { name: 'ops-a', roles: ['operator'], queues: ['a-jobs'], token_sha256: sha256('token-ops-a') },
    { name: 'ops', roles: ['operator'], token_sha256: sha256('token-ops') },
    { name: 'team-a', roles: ['producer', 'worker'], queues: ['a-jobs'], token_sha256: sha256('token-a') },
  ],
};

/** SetQueueLimits under principals from an auth file (ojs-security: queue scope, roles). */
describe('who may set queue limits', () => {
  let dir: string;
  let server: TestServer;
  let opsA: Clients;
  let ops: Clients;
  let teamA: Clients;

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'ojs-queue-limits-'));
    const authFile = join(dir, 'principals.json');
    writeFileSync(authFile, JSON.stringify(PRINCIPALS));
    // The file does not change during the tests: no reload is needed.
    server = await TestServer.start({ security: { authFile, reloadIntervalMs: 60_000 } });
    [opsA, ops, teamA] = [
      server.connect({ token: 'token-ops-a' }),
      server.connect({ token: 'token-ops' }),
      server.connect({ token: 'token-a' }),
    ];
  });
  afterAll(async () => {
    await server?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  it('lets a queue-scoped operator set and clear the limits of its own queue', async () => {
    const set = await opsA.operator.setQueueLimits({ queue: 'a-jobs', limits: { maxActive: 3, rate: { limit: 5, period: SECOND } } });
    expect(set.queue).toMatchObject({ name: 'a-jobs', limits: { maxActive: 3, rate: { limit: 5, period: SECOND } } });
    expect((await ops.operator.getQueueStats({ queue: 'a-jobs' })).queue?.limits).toMatchObject({ maxActive: 3 });
    expect((await opsA.operator.setQueueLimits({ queue: 'a-jobs' })).queue?.limits).toBeUndefined();
  });

  it("refuses a queue-scoped operator another queue's limits, setting or clearing, and changes nothing", async () => {
    await ops.operator.setQueueLimits({ queue: 'b-jobs', limits: { maxActive: 7 } });
    for (const limits of [{ maxActive: 0 }, undefined]) {
      expect(await rpcError(opsA.operator.setQueueLimits({ queue: 'b-jobs', ...(limits === undefined ? {} : { limits }) }))).toMatchObject({
        code: Status.PERMISSION_DENIED,
        reason: 'permission_denied',
        metadata: { field: 'queue', queue: 'b-jobs' },
      });
    }
    expect((await ops.operator.getQueueStats({ queue: 'b-jobs' })).queue?.limits).toEqual({ maxActive: 7 });
    await ops.operator.setQueueLimits({ queue: 'b-jobs' });
  });

  it('refuses a principal without the operator role, even on its own queue', async () => {
    expect(await rpcError(teamA.operator.setQueueLimits({ queue: 'a-jobs', limits: { maxActive: 1 } }))).toMatchObject({
      code: Status.PERMISSION_DENIED,
      reason: 'permission_denied',
    });
    expect((await ops.operator.getQueueStats({ queue: 'a-jobs' })).queue?.limits).toBeUndefined();
  });
});
