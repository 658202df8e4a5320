import { createHash, randomUUID } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { ChannelCredentials } from 'nice-grpc';
import { JobState } from '../../gen/ojs/server/v1/job';
import { WorkerState } from '../../gen/ojs/server/v1/worker_service';
import { TestCertificates, type IssuedCertificate } from '../support/certificates';
import { enqueue, enqueueOne, getJob } from '../support/jobs';
import { TestServer, type Clients } from '../support/test-server';
import { buildExampleWorkers, WorkerProcess, type Language, type WorkerOptions } from './worker-process';

/**
 * The Python and Go example workers (examples/), built from stubs generated
 * from proto/, run as processes of their own against a real server with TLS
 * and an auth file: they trust the test CA and send a bearer token. The
 * tests wait on the JSON events the workers print and check the outcome on
 * the server.
 */
const LANGUAGES: Language[] = ['python', 'go'];
const S = JobState;
/** Retries after 50 ms, without jitter, so that a test sees every attempt quickly. */
const QUICK_RETRY = { initialInterval: 'PT0.05S', jitter: false };
const WORKER_TOKEN = 'polyglot-worker-token';
const ADMIN_TOKEN = 'polyglot-admin-token';
const CERT_WORKER = 'URI:spiffe://test/polyglot-worker';

let certificates: TestCertificates;
let clientCert: IssuedCertificate;
let authFile: string;
let server: TestServer;
let clients: Clients;
/** What every worker runs with: TLS trusting the test CA, and the workers' token. */
let workerEnv: Record<string, string>;
const started: WorkerProcess[] = [];

beforeAll(async () => {
  buildExampleWorkers();
  certificates = await TestCertificates.create();
  const serverCert = await certificates.issueServer('server');
  clientCert = await certificates.issue('worker', { commonName: 'polyglot-worker', altNames: [CERT_WORKER] });
  authFile = certificates.path('principals.json');
  const sha256 = (token: string): string => createHash('sha256').update(token).digest('hex');
  writeFileSync(
    authFile,
    JSON.stringify({
      principals: [
        { name: 'polyglot-workers', roles: ['worker'], token_sha256: sha256(WORKER_TOKEN) },
        { name: 'cert-workers', roles: ['worker'], client_cert: CERT_WORKER },
        { name: 'test', roles: ['admin'], token_sha256: sha256(ADMIN_TOKEN) },
      ],
    }),
  );
  // Background loops on (every 20 ms): retries are promoted without the test's help.
  server = await TestServer.start({ runMaintenance: true, security: secured(serverCert) });
  clients = server.connect({ credentials: ChannelCredentials.createSsl(certificates.read('ca.pem')), token: ADMIN_TOKEN });
  workerEnv = { OJS_TLS_CA: certificates.path('ca.pem'), OJS_TOKEN: WORKER_TOKEN };
}, 120_000);

afterEach(async () => {
  for (const worker of started.splice(0)) await worker.kill();
});

afterAll(async () => {
  await server?.stop();
  certificates?.remove();
});

/** TLS with the server's certificate and the auth file; client certificates required when `clientCa`. */
function secured(serverCert: IssuedCertificate, options: { clientCa?: boolean } = {}) {
  const clientCaFile = options.clientCa === true ? { clientCaFile: certificates.path('ca.pem') } : {};
  return { tls: { certFile: serverCert.certFile, keyFile: serverCert.keyFile, ...clientCaFile }, authFile, reloadIntervalMs: 60_000 };
}

describe.each(LANGUAGES)('the %s example worker', (language) => {
  async function startWorker(options: Partial<WorkerOptions> = {}): Promise<{ worker: WorkerProcess; workerId: string; queue: string }> {
    const queue = options.queues?.[0] ?? `${language}-${randomUUID().slice(0, 8)}`;
    const workerId = options.workerId ?? `${language}-worker-${randomUUID()}`;
    const worker = WorkerProcess.start(language, {
      server: server.address,
      workerId,
      queues: [queue],
      concurrency: 2,
      env: workerEnv,
      ...options,
    });
    started.push(worker);
    await worker.waitForEvent('registered', { worker_id: workerId });
    return { worker, workerId, queue };
  }

  it('completes every job, never running more than its concurrency', async () => {
    const { worker, queue } = await startWorker({ concurrency: 3 });
    const sleepers = await enqueue(clients, ...Array.from({ length: 6 }, () => ({ type: 'sleep', queue, args: [50] })));
    const echoes = await enqueue(
      clients,
      ...Array.from({ length: 6 }, (_, i) => ({ type: 'echo', queue, args: [i, `arg-${i}`, { nested: [true, null] }] })),
    );

    for (const job of [...sleepers, ...echoes]) await worker.waitForEvent('acked', { job_id: job.id });

    for (const job of echoes) {
      const stored = await getJob(clients, job.id);
      expect(stored).toMatchObject({ state: S.JOB_STATE_COMPLETED, attempt: 1 });
      expect(stored.result).toEqual(job.args);
    }
    expect((await getJob(clients, sleepers[0]!.id)).result).toEqual({ slept_ms: 50 });
    // All twelve were available at once: the first delivery filled the worker, and nothing more.
    expect(Math.max(...worker.all('started').map((e) => e.running as number))).toBe(3);
    expect(worker.all('over_capacity')).toEqual([]);
    expect(await worker.stop('SIGTERM')).toBe(0);
  });

  it('reports failures as structured errors, and each is retried per its policy', async () => {
    const { worker, queue } = await startWorker();
    const [failing, flaky, fatal] = await enqueue(
      clients,
      { type: 'fail', queue, args: ['BoomError', 'boom'], retry: { maxAttempts: 3, ...QUICK_RETRY } },
      { type: 'flaky', queue, args: [2], retry: { maxAttempts: 3, ...QUICK_RETRY } },
      {
        type: 'fail',
        queue,
        args: ['FatalError', 'no point retrying'],
        retry: { maxAttempts: 5, nonRetryableErrors: ['FatalError'], ...QUICK_RETRY },
      },
    );

    await worker.waitForEvent('failed', { job_id: failing!.id, attempt: 3, state: 'discarded' });
    await worker.waitForEvent('acked', { job_id: flaky!.id, attempt: 2 });
    await worker.waitForEvent('failed', { job_id: fatal!.id, attempt: 1, state: 'discarded' });

    expect(worker.all('failed', { job_id: failing!.id }).map((e) => [e.attempt, e.state])).toEqual([
      [1, 'retryable'],
      [2, 'retryable'],
      [3, 'discarded'],
    ]);
    const failed = await getJob(clients, failing!.id);
    expect(failed).toMatchObject({ state: S.JOB_STATE_DISCARDED, attempt: 3 });
    expect(failed.errors.map((e) => [e.type, e.message, e.attempt, e.details])).toEqual([
      ['BoomError', 'boom', 1, { attempt: 1 }],
      ['BoomError', 'boom', 2, { attempt: 2 }],
      ['BoomError', 'boom', 3, { attempt: 3 }],
    ]);
    const recovered = await getJob(clients, flaky!.id);
    expect(recovered).toMatchObject({ state: S.JOB_STATE_COMPLETED, attempt: 2, result: { attempt: 2 } });
    expect(recovered.errors.map((e) => e.type)).toEqual(['FlakyError']);
    expect(await getJob(clients, fatal!.id)).toMatchObject({ state: S.JOB_STATE_DISCARDED, attempt: 1, error: { type: 'FatalError' } });
    expect(await worker.stop('SIGTERM')).toBe(0);
  });

  it('stops a job the server cancels, and goes on with the next', async () => {
    const { worker, queue } = await startWorker({ concurrency: 1 });
    const long = await enqueueOne(clients, { type: 'sleep', queue, args: [60_000] });
    await worker.waitForEvent('started', { job_id: long.id });

    await clients.jobs.cancelJob({ jobId: long.id });
    await worker.waitForEvent('cancelled', { job_id: long.id });
    const next = await enqueueOne(clients, { type: 'echo', queue, args: ['next'] });
    await worker.waitForEvent('acked', { job_id: next.id });

    expect((await getJob(clients, long.id)).state).toBe(S.JOB_STATE_CANCELLED);
    expect(worker.all('settle_refused')).toEqual([]);
    expect(await worker.stop('SIGTERM')).toBe(0);
  });

  it('stops a job whose execution timeout passed, and fails it as "timeout" within the grace period', async () => {
    const { worker, queue } = await startWorker({ concurrency: 1 });
    const slow = await enqueueOne(clients, {
      type: 'sleep',
      queue,
      args: [60_000],
      timeout: 1,
      gracePeriod: 30,
      retry: { maxAttempts: 1 },
    });

    await worker.waitForEvent('stopping', { job_id: slow.id, reason: 'timeout' });
    await worker.waitForEvent('failed', { job_id: slow.id, error_type: 'timeout', state: 'discarded' });

    // The worker's own report, long before the server would have reclaimed the job.
    expect((await getJob(clients, slow.id)).error).toMatchObject({
      type: 'timeout',
      message: "stopped: the job's execution timeout passed",
    });
    expect(await worker.stop('SIGTERM')).toBe(0);
  });

  it('on SIGTERM stops fetching, drains, fails what is left as "shutdown", deregisters and exits 0', async () => {
    const { worker, workerId, queue } = await startWorker({ concurrency: 2, gracePeriod: '1500ms' });
    const short = await enqueueOne(clients, { type: 'sleep', queue, args: [300] });
    const long = await enqueueOne(clients, { type: 'sleep', queue, args: [60_000], retry: { initialInterval: 'PT1M' } });
    await worker.waitForEvent('started', { job_id: short.id });
    await worker.waitForEvent('started', { job_id: long.id });

    process.kill(worker.pid, 'SIGTERM');
    // Once the server has answered a beat reporting terminate, it delivers nothing more.
    await worker.waitForEvent('beat', { server_state: 'terminate' });
    const late = await enqueueOne(clients, { type: 'echo', queue });
    await worker.waitForEvent('acked', { job_id: short.id });
    const shutdown = await worker.waitForEvent('failed', { job_id: long.id, error_type: 'shutdown' });
    await worker.waitForEvent('deregistered');
    expect(await worker.exitCode()).toBe(0);

    // The long job was failed when the grace period ended, not before.
    expect(shutdown.ts - worker.all('signal')[0]!.ts).toBeGreaterThanOrEqual(1.4);
    expect(await getJob(clients, short.id)).toMatchObject({ state: S.JOB_STATE_COMPLETED });
    expect(await getJob(clients, long.id)).toMatchObject({ state: S.JOB_STATE_RETRYABLE, attempt: 1, error: { type: 'shutdown' } });
    expect(await getJob(clients, late.id)).toMatchObject({ state: S.JOB_STATE_AVAILABLE, attempt: 0 });
    expect(worker.all('started', { job_id: late.id })).toEqual([]);
    const { workers } = await clients.operator.listWorkers({ label: '', queue: '' });
    expect(workers.map((w) => w.workerId)).not.toContain(workerId);
  });

  it('stops fetching on a quiet directive but finishes its job, resumes on running, and shuts down on terminate', async () => {
    const { worker, workerId, queue } = await startWorker({ concurrency: 1 });
    const target = { $case: 'workerId' as const, value: workerId };
    // Longer than the heartbeat timeout (3 s): had a beat not listed it, the server would have taken it back.
    const inFlight = await enqueueOne(clients, { type: 'sleep', queue, args: [3_500] });
    await worker.waitForEvent('started', { job_id: inFlight.id });

    await clients.operator.setWorkerState({ state: WorkerState.WORKER_STATE_QUIET, target });
    await worker.waitForEvent('state', { state: 'quiet', cause: 'directive' });
    await worker.waitForEvent('beat', { server_state: 'quiet' });
    const waiting = await enqueueOne(clients, { type: 'echo', queue, args: ['after quiet'] });
    await worker.waitForEvent('acked', { job_id: inFlight.id });
    // A beat after that, still quiet: the worker is alive, and does not take the waiting job.
    await worker.waitForEvent('beat', { state: 'quiet', active_jobs: 0 });
    expect((await getJob(clients, waiting.id)).state).toBe(S.JOB_STATE_AVAILABLE);
    expect(worker.all('started', { job_id: waiting.id })).toEqual([]);
    expect(worker.all('settle_refused')).toEqual([]);
    const [info] = (await clients.operator.listWorkers({ label: '', queue })).workers;
    expect(info).toMatchObject({ workerId, state: WorkerState.WORKER_STATE_QUIET, activeJobs: 0 });

    await clients.operator.setWorkerState({ state: WorkerState.WORKER_STATE_RUNNING, target });
    await worker.waitForEvent('acked', { job_id: waiting.id });

    await clients.operator.setWorkerState({ state: WorkerState.WORKER_STATE_TERMINATE, target });
    await worker.waitForEvent('state', { state: 'terminate', cause: 'directive' });
    await worker.waitForEvent('deregistered');
    expect(await worker.exitCode()).toBe(0);
  });
});

describe.each(LANGUAGES)('the %s example worker, securing its connection', (language) => {
  const servers: TestServer[] = [];
  afterEach(async () => {
    for (const stopping of servers.splice(0)) await stopping.stop();
  });

  function start(address: string, env: Record<string, string>, queue = `${language}-${randomUUID().slice(0, 8)}`): WorkerProcess {
    const worker = WorkerProcess.start(language, {
      server: address,
      workerId: `${language}-${randomUUID()}`,
      queues: [queue],
      concurrency: 1,
      env,
    });
    started.push(worker);
    return worker;
  }

  it('runs a job over mTLS, known to the server by its client certificate alone', async () => {
    const mtls = await TestServer.start({ security: secured(await certificates.issueServer('mtls-server'), { clientCa: true }) });
    servers.push(mtls);
    const queue = `${language}-mtls`;
    const worker = start(
      mtls.address,
      { OJS_TLS_CA: certificates.path('ca.pem'), OJS_TLS_CERT: clientCert.certFile, OJS_TLS_KEY: clientCert.keyFile },
      queue,
    );
    const admin = mtls.connect({
      credentials: ChannelCredentials.createSsl(
        certificates.read('ca.pem'),
        certificates.read('worker.key'),
        certificates.read('worker.pem'),
      ),
      token: ADMIN_TOKEN,
    });
    const job = await enqueueOne(admin, { type: 'echo', queue, args: ['over mtls'] });
    await worker.waitForEvent('acked', { job_id: job.id });
    expect(await getJob(admin, job.id)).toMatchObject({ state: S.JOB_STATE_COMPLETED, result: ['over mtls'] });
    expect(await worker.stop('SIGTERM')).toBe(0);
  });

  it('exits 1 with UNAUTHENTICATED when its token is wrong, without retrying', async () => {
    const worker = start(server.address, { ...workerEnv, OJS_TOKEN: 'guessed' });
    const fatal = await worker.waitForEvent('fatal');
    // Python prints grpc's UNAUTHENTICATED, Go its Unauthenticated.
    expect(String(fatal.code).toUpperCase()).toBe('UNAUTHENTICATED');
    expect(await worker.exitCode()).toBe(1);
    expect(worker.all('register_retry')).toEqual([]);
  });

  it('refuses to send its token in plaintext, before connecting', async () => {
    const worker = start(server.address, { OJS_TOKEN: WORKER_TOKEN });
    const fatal = await worker.waitForEvent('fatal');
    expect(fatal.code).toBe('INVALID_SETTING');
    expect(fatal.message).toMatch(/^OJS_TOKEN needs TLS/);
    expect(await worker.exitCode()).toBe(2);
  });

  it('still runs over plaintext without a token, as for local development', async () => {
    const plaintext = await TestServer.start();
    servers.push(plaintext);
    const queue = `${language}-plaintext`;
    const worker = start(plaintext.address, {}, queue);
    const job = await enqueueOne(plaintext.connect(), { type: 'echo', queue, args: ['in plaintext'] });
    await worker.waitForEvent('acked', { job_id: job.id });
    expect(await worker.stop('SIGTERM')).toBe(0);
  });
});
