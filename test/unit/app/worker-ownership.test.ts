import { createApplication } from '../../../src/app/application';
import { OjsError } from '../../../src/domain/errors';
import type { Job } from '../../../src/domain/job';
import type { Principal } from '../../../src/domain/principal';
import { AppHarness, SETTINGS } from './app-harness';

const TEAM_A: Principal = { name: 'team-a', roles: new Set(['worker']) };
const TEAM_B: Principal = { name: 'team-b', roles: new Set(['worker']) };
const BOOM = { type: 'boom', message: 'it broke', backtrace: [] };

/** What a refusal tells the caller: everything but the stack. */
async function refusalOf(promise: Promise<unknown>): Promise<{ code: string; message: string; metadata: object }> {
  try {
    await promise;
  } catch (error) {
    if (!(error instanceof OjsError)) throw error;
    return { code: error.code, message: error.message, metadata: error.metadata };
  }
  throw new Error('expected a refusal');
}

/** Every WorkerService use of a worker id other than Register, as `caller` would make it for `workerId` about `job`. */
const USES: Record<string, (h: AppHarness, caller: Principal, workerId: string, job: Job) => Promise<unknown>> = {
  Beat: (h, caller, workerId) => h.app.workers.beat(caller, { workerId, state: 'running', sequence: 1, activeJobIds: [] }),
  Fetch: (h, caller, workerId) => h.app.streams.openFetch(caller, workerId, [], 0),
  'Ack and AckBatch': (h, caller, workerId, job) =>
    h.app.settlement.ack(caller, workerId, [{ jobId: job.id, leaseToken: job.lease!.token }]),
  'Fail and FailBatch': (h, caller, workerId, job) =>
    h.app.settlement.fail(caller, workerId, [{ jobId: job.id, leaseToken: job.lease!.token, report: BOOM }]),
  ReportProgress: (h, caller, workerId, job) =>
    h.app.settlement.reportProgress(caller, workerId, job.id, job.lease!.token, { progress: 0.5 }),
  ExtendLease: (h, caller, workerId, job) => h.app.settlement.extendLease(caller, workerId, job.id, job.lease!.token),
  Deregister: (h, caller, workerId) => h.app.workers.deregister(caller, workerId),
};

describe('workers belong to the principal that registered them', () => {
  let h: AppHarness;
  let held: Job;

  beforeEach(async () => {
    h = new AppHarness();
    await h.register('w1', {}, TEAM_A);
    await h.enqueue();
    held = await h.claimOne('w1', TEAM_A);
  });

  afterEach(async () => {
    await h.stop();
  });

  it('records the registering principal as the owner', async () => {
    expect((await h.app.workers.get('w1')).worker.owner).toBe('team-a');
  });

  it.each(Object.keys(USES))(
    "answers another principal's %s with the same NOT_FOUND as for an unknown worker id, and changes nothing",
    async (use) => {
      const stranger = await refusalOf(USES[use]!(h, TEAM_B, 'w1', held));
      await h.register('w-unknown-to-b', {}, TEAM_A);
      await h.app.workers.deregister(TEAM_A, 'w-unknown-to-b');
      const unknown = await refusalOf(USES[use]!(h, TEAM_B, 'w-unknown-to-b', held));

      expect(stranger).toEqual({ code: 'not_found', message: 'worker w1 is not registered', metadata: { worker_id: 'w1' } });
      expect(unknown).toEqual({
        ...stranger,
        message: 'worker w-unknown-to-b is not registered',
        metadata: { worker_id: 'w-unknown-to-b' },
      });
      expect(await h.job(held.id)).toMatchObject({ state: 'active', lease: { workerId: 'w1', token: held.lease!.token } });
      expect((await h.app.workers.get('w1')).heldJobIds).toEqual([held.id]);
    },
  );

  it.each(Object.keys(USES))('lets the owner use %s', async (use) => {
    await expect(USES[use]!(h, TEAM_A, 'w1', held)).resolves.toBeDefined();
  });

  it("refuses another principal's registration of a live worker id as a duplicate, keeping the owner", async () => {
    await expect(h.register('w1', {}, TEAM_B)).rejects.toMatchObject({ code: 'duplicate' });
    expect((await h.app.workers.get('w1')).worker.owner).toBe('team-a');
  });

  it("does not let another principal take over a silent worker's id; its owner may", async () => {
    h.clock.advance(SETTINGS.heartbeatTimeoutMs + 1);

    await expect(h.register('w1', {}, TEAM_B)).rejects.toMatchObject({ code: 'duplicate' });
    expect(await h.job(held.id)).toMatchObject({ state: 'active' });

    await h.register('w1', {}, TEAM_A);
    expect((await h.app.workers.get('w1')).worker).toMatchObject({ owner: 'team-a', registeredAt: h.clock.now() });
  });

  it('checks the owner of a settling worker without reading the worker from the store on each call', async () => {
    await h.enqueue();
    await h.enqueue();
    const jobs = [held, ...(await h.claim('w1', TEAM_A))];
    const reads = jest.spyOn(h.store, 'getWorker');

    for (const job of jobs) {
      await h.app.settlement.extendLease(TEAM_A, 'w1', job.id, job.lease!.token);
      const [outcome] = await h.app.settlement.ack(TEAM_A, 'w1', [{ jobId: job.id, leaseToken: job.lease!.token }]);
      expect(outcome).toMatchObject({ ok: true });
    }

    expect(jobs).toHaveLength(3);
    expect(reads).not.toHaveBeenCalled();
  });

  it('forgets the owner when the worker goes, so the next owner of the id settles and the former one cannot', async () => {
    await h.app.workers.deregister(TEAM_A, 'w1');
    await h.register('w1', {}, TEAM_B);
    // The job team-a's worker held went back to available when it deregistered.
    const job = await h.claimOne('w1', TEAM_B);

    await expect(USES['Ack and AckBatch']!(h, TEAM_A, 'w1', job)).rejects.toMatchObject({ code: 'not_found' });
    const [outcome] = await h.app.settlement.ack(TEAM_B, 'w1', [{ jobId: job.id, leaseToken: job.lease!.token }]);
    expect(outcome).toMatchObject({ ok: true });
  });

  it("reads the owner of a worker registered through another replica, and refuses a stranger's settlement", async () => {
    // A second application over the same store stands for another replica: it never saw the registration.
    const replica = createApplication({ ...h.app.context });
    try {
      await expect(replica.settlement.ack(TEAM_B, 'w1', [{ jobId: held.id, leaseToken: held.lease!.token }])).rejects.toMatchObject({
        code: 'not_found',
      });
      const [outcome] = await replica.settlement.ack(TEAM_A, 'w1', [{ jobId: held.id, leaseToken: held.lease!.token }]);
      expect(outcome).toMatchObject({ ok: true });
    } finally {
      replica.owners.stop();
      replica.streams.stop();
    }
  });
});
