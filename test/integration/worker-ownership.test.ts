import { createHash } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Status } from 'nice-grpc';
import { HandlerCode, JobState } from '../../gen/ojs/server/v1/job';
import { WorkerState, type BeatRequest, type Delivery, type FetchResponse } from '../../gen/ojs/server/v1/worker_service';
import { rpcError, type RpcFailure } from '../support/rpc-error';
import { RequestStream, StreamReader } from '../support/streams';
import { TestServer, type Clients } from '../support/test-server';
import { TestWorker } from '../support/test-worker';

const FAILURE = { type: 'boom', message: 'it broke', code: HandlerCode.HANDLER_CODE_UNSPECIFIED };
const sha256 = (token: string): string => createHash('sha256').update(token).digest('hex');

/** Two tenants, each limited to its own queue, and an operator for every queue. */
const PRINCIPALS = {
  principals: [
    { name: 'team-a', roles: ['producer', 'worker'], queues: ['a-jobs'], token_sha256: sha256('token-a') },
    { name: 'team-b', roles: ['producer', 'worker'], queues: ['b-jobs'], token_sha256: sha256('token-b') },
    { name: 'ops', roles: ['operator'], token_sha256: sha256('token-ops') },
  ],
};

/** A refusal as a stranger sees it: what it may compare with the refusal for a worker id that does not exist. */
function seen(failure: RpcFailure): Omit<RpcFailure, 'message' | 'metadata'> {
  const { message: _message, metadata: _metadata, ...rest } = failure;
  return rest;
}

describe('workers belong to their principal, over gRPC with bearer tokens', () => {
  let dir: string;
  let server: TestServer;
  let teamA: Clients;
  let teamB: Clients;
  let worker: TestWorker;
  let delivery: Delivery;
  const streams: { close(): void }[] = [];

  beforeEach(async () => {
    dir = mkdtempSync(join(tmpdir(), 'ojs-ownership-'));
    const authFile = join(dir, 'principals.json');
    writeFileSync(authFile, JSON.stringify(PRINCIPALS));
    // The file does not change during a test: no reload is needed.
    server = await TestServer.start({ security: { authFile, reloadIntervalMs: 60_000 } });
    teamA = server.connect({ token: 'token-a' });
    teamB = server.connect({ token: 'token-b' });
    worker = await TestWorker.register(teamA, { workerId: 'w-a', queues: ['a-jobs'] });
    await teamA.jobs.enqueue({ jobs: [{ type: 'a.job', queue: 'a-jobs' }] });
    const fetch: StreamReader<FetchResponse> = worker.openFetch();
    streams.push(fetch);
    delivery = (await fetch.nextMatching((message) => message.deliveries.length > 0)).deliveries[0]!;
  });

  afterEach(async () => {
    for (const stream of streams.splice(0)) stream.close();
    await server.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  it("answers another principal's Fetch, Beat, Ack, Fail, ExtendLease, ReportProgress and Deregister as for an unknown worker, and changes nothing", async () => {
    const asB = (workerId: string) => ({ workerId, jobId: delivery.job!.id, leaseToken: delivery.leaseToken });
    const calls: Record<string, (workerId: string) => Promise<unknown>> = {
      Fetch: (workerId) => teamB.workers.fetch({ workerId, queues: [] })[Symbol.asyncIterator]().next(),
      Ack: (workerId) => teamB.workers.ack(asB(workerId)),
      AckBatch: (workerId) => teamB.workers.ackBatch({ workerId, completions: [asB(workerId)] }),
      Fail: (workerId) => teamB.workers.fail({ ...asB(workerId), error: FAILURE }),
      FailBatch: (workerId) => teamB.workers.failBatch({ workerId, failures: [{ ...asB(workerId), error: FAILURE }] }),
      ExtendLease: (workerId) => teamB.workers.extendLease(asB(workerId)),
      ReportProgress: (workerId) => teamB.workers.reportProgress({ ...asB(workerId), progress: 0.5 }),
      Deregister: (workerId) => teamB.workers.deregister({ workerId }),
    };
    for (const [name, call] of Object.entries(calls)) {
      const stranger = await rpcError(call('w-a'));
      const unknown = await rpcError(call('w-nobody'));
      expect([name, stranger]).toEqual([name, expect.objectContaining({ code: Status.NOT_FOUND, reason: 'not_found' })]);
      expect([name, seen(stranger)]).toEqual([name, seen(unknown)]);
    }

    // A Beat stream naming the worker is refused at its first message, before it hears any push for the worker.
    const beats = new RequestStream<BeatRequest>();
    const strangerBeat = new StreamReader(teamB.workers.beat(beats.queue), new AbortController());
    streams.push(strangerBeat);
    beats.send({ workerId: 'w-a', state: WorkerState.WORKER_STATE_RUNNING, activeJobs: 0, activeJobIds: [], sequence: 1 });
    expect(await rpcError(strangerBeat.next())).toMatchObject({ code: Status.NOT_FOUND, reason: 'not_found' });

    const job = (await teamA.jobs.getJob({ jobId: delivery.job!.id })).job!;
    expect(job).toMatchObject({ state: JobState.JOB_STATE_ACTIVE, workerId: 'w-a' });
    expect(await worker.ack(delivery)).toEqual({});
  });

  it('refuses to register a worker for, or to enqueue into, a queue the principal may not use', async () => {
    expect(await rpcError(TestWorker.register(teamB, { workerId: 'w-b', queues: ['a-jobs'] }))).toMatchObject({
      code: Status.PERMISSION_DENIED,
      reason: 'permission_denied',
      domain: 'openjobspec.org',
      metadata: { field: 'queues[0]', queue: 'a-jobs' },
    });
    expect(await rpcError(teamB.jobs.enqueue({ jobs: [{ type: 'b.job', queue: 'a-jobs' }] }))).toMatchObject({
      code: Status.PERMISSION_DENIED,
      reason: 'permission_denied',
      metadata: { field: 'jobs[0].queue', queue: 'a-jobs' },
    });
    expect(await rpcError(teamB.jobs.getJob({ jobId: delivery.job!.id }))).toMatchObject({ code: Status.NOT_FOUND, reason: 'not_found' });
  });

  it("refuses another principal's registration of a live worker id, and lets an unscoped operator steer it", async () => {
    expect(await rpcError(TestWorker.register(teamB, { workerId: 'w-a', queues: ['b-jobs'] }))).toMatchObject({
      code: Status.ALREADY_EXISTS,
    });
    const ops = server.connect({ token: 'token-ops' });
    expect(
      await ops.operator.setWorkerState({ target: { $case: 'workerId', value: 'w-a' }, state: WorkerState.WORKER_STATE_QUIET }),
    ).toMatchObject({ directed: 1 });
  });
});
