import { createHash, randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Status } from 'nice-grpc';
import { JobState, type Job } from '../../gen/ojs/server/v1/job';
import type { DeepPartial } from '../../gen/ojs/server/v1/job_service';
import { ManualClock } from '../support/manual-clock';
import { rpcError } from '../support/rpc-error';
import { shareServer } from '../support/shared-server';
import { TestServer } from '../support/test-server';
import { TestWorker } from '../support/test-worker';

const newQueue = (): string => `q-${randomUUID().slice(0, 8)}`;
const sha256 = (token: string): string => createHash('sha256').update(token).digest('hex');

/** Unique jobs (ojs-unique-jobs) through Enqueue: each conflict policy, release, periods and batches. */
describe('unique jobs', () => {
  const clock = new ManualClock();
  const shared = shareServer({ clock, protocol: { heartbeatTimeoutMs: 3_600_000 } });

  const enqueue = (...jobs: DeepPartial<Job>[]) => shared.clients.jobs.enqueue({ jobs });
  const report = (queue: string, onConflict: string, more: DeepPartial<Job['unique']> = {}): DeepPartial<Job> => ({
    type: 'report.build',
    queue,
    args: [{ account: 42 }],
    unique: { keys: ['type', 'queue', 'args'], onConflict, ...more },
  });

  it('rejects a duplicate with ALREADY_EXISTS naming the job that holds the key', async () => {
    const queue = newQueue();
    const [first] = (await enqueue(report(queue, 'reject'))).jobs;
    const failure = await rpcError(enqueue(report(queue, 'reject')));
    expect(failure).toMatchObject({ code: Status.ALREADY_EXISTS, reason: 'duplicate' });
    expect(failure.metadata).toMatchObject({ existing_job_id: first!.id, existing_job_state: 'available' });
    // Other args make another key.
    await enqueue({ ...report(queue, 'reject'), args: [{ account: 43 }] });
  });

  it('returns the existing job in place of an ignored duplicate, within a batch too', async () => {
    const queue = newQueue();
    const [first] = (await enqueue(report(queue, 'ignore'))).jobs;
    const answer = await enqueue(report(queue, 'ignore'), { type: 'other.job', queue });
    expect(answer.jobs[0]!.id).toBe(first!.id);
    expect(answer.outcomes.map((o) => o.deduplicated)).toEqual([true, false]);
    const batch = await enqueue(report(newQueue(), 'ignore'), report(newQueue(), 'ignore'));
    expect(batch.outcomes.map((o) => o.deduplicated)).toEqual([false, false]);
  });

  it('cancels the existing job when a duplicate replaces it', async () => {
    const queue = newQueue();
    const [first] = (await enqueue(report(queue, 'replace'))).jobs;
    const answer = await enqueue(report(queue, 'replace'));
    expect(answer.outcomes[0]!.replacedJobId).toBe(first!.id);
    expect(answer.jobs[0]!.id).not.toBe(first!.id);
    expect((await shared.clients.jobs.getJob({ jobId: first!.id })).job!.state).toBe(JobState.JOB_STATE_CANCELLED);
  });

  it('releases the key once the job completes, and after its period', async () => {
    const queue = newQueue();
    const worker = await TestWorker.register(shared.clients, { queues: [queue] });
    const fetch = shared.closeAfterTest(worker.openFetch());
    await enqueue(report(queue, 'reject'));
    const delivery = (await fetch.nextMatching((m) => m.deliveries.length > 0)).deliveries[0]!;
    await worker.ack(delivery);
    await enqueue(report(queue, 'reject'));

    const periodic = { ...report(newQueue(), 'reject', { period: 'PT1M' }), scheduledAt: new Date(clock.now() + 3_600_000) };
    await enqueue(periodic);
    expect((await rpcError(enqueue(periodic))).code).toBe(Status.ALREADY_EXISTS);
    clock.advance(60_000);
    await enqueue(periodic);
  });

  it('refuses a policy it cannot honour with INVALID_ARGUMENT naming the field', async () => {
    const failure = await rpcError(enqueue({ type: 'x', unique: { keys: ['colour'] } }));
    expect(failure).toMatchObject({ code: Status.INVALID_ARGUMENT });
    expect(failure.fields).toEqual(['jobs[0].unique.keys']);
    expect((await rpcError(enqueue({ type: 'x', unique: { onConflict: 'shrug' } }))).code).toBe(Status.INVALID_ARGUMENT);
  });
});

describe('unique jobs across tenants', () => {
  let dir: string;
  let server: TestServer;

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'ojs-unique-'));
    const authFile = join(dir, 'principals.json');
    const principals = [
      { name: 'team-a', roles: ['producer'], queues: ['a-jobs'], token_sha256: sha256('token-a') },
      { name: 'team-b', roles: ['producer'], queues: ['b-jobs'], token_sha256: sha256('token-b') },
    ];
    writeFileSync(authFile, JSON.stringify({ principals }));
    server = await TestServer.start({ security: { authFile, reloadIntervalMs: 60_000 } });
  });
  afterAll(async () => {
    await server.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  it("keys a queue-scoped tenant's jobs by its queue, so that no tenant's job stands in for another's", async () => {
    const unique = { keys: ['type'], onConflict: 'reject' };
    const a = (await server.connect({ token: 'token-a' }).jobs.enqueue({ jobs: [{ type: 'nightly', queue: 'a-jobs', unique }] })).jobs[0]!;
    const b = (await server.connect({ token: 'token-b' }).jobs.enqueue({ jobs: [{ type: 'nightly', queue: 'b-jobs', unique }] })).jobs[0]!;
    expect(b.id).not.toBe(a.id);
  });
});
