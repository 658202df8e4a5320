import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { HealthCheckResponse_ServingStatus } from 'nice-grpc-server-health/lib/proto/grpc/health/v1/health';
import { JobState } from '../../gen/ojs/server/v1/job';
import { TestServer, type Clients } from '../support/test-server';
import { TestWorker } from '../support/test-worker';

const run = promisify(execFile);
const BUF = join(__dirname, '..', '..', 'node_modules', '.bin', 'buf');

/** The unary calls of the README's buf curl block, as [path after the host, request body]. */
function readmeBufCurlCalls(): [string, string][] {
  const readme = readFileSync(join(__dirname, '..', '..', 'README.md'), 'utf8');
  const calls: [string, string][] = [];
  const services: Record<string, string> = { $OPS: 'ojs.server.v1.OperatorService', $WF: 'ojs.server.v1.WorkflowService' };
  for (const match of readme.matchAll(/^\$BUF_CURL (\$OPS|\$WF|http:\/\/127\.0\.0\.1:9090\/[\w.]+)\/(\w+) -d '([^']*)'/gm)) {
    const service = services[match[1]!] ?? match[1]!.slice('http://127.0.0.1:9090/'.length);
    if (match[2] !== 'WatchEvents') calls.push([`${service}/${match[2]}`, match[3]!]);
  }
  return calls;
}

describe('operability', () => {
  let server: TestServer;
  let clients: Clients;

  beforeAll(async () => {
    server = await TestServer.start();
    clients = server.connect();
  });
  afterAll(() => server.stop());

  /** `buf curl` with no schema: everything it knows comes from server reflection. */
  async function bufCurl(...args: string[]): Promise<string> {
    const { stdout } = await run(BUF, ['curl', '--protocol', 'grpc', '--http2-prior-knowledge', ...args], { timeout: 15_000 });
    return stdout;
  }

  it('reports SERVING on the standard health service, overall and per service', async () => {
    expect((await clients.health.check({ service: '' })).status).toBe(HealthCheckResponse_ServingStatus.SERVING);
    expect((await clients.health.check({ service: 'ojs.server.v1.WorkerService' })).status).toBe(HealthCheckResponse_ServingStatus.SERVING);
    const watch = clients.health.watch({ service: '' })[Symbol.asyncIterator]();
    expect((await watch.next()).value).toMatchObject({ status: HealthCheckResponse_ServingStatus.SERVING });
    await watch.return?.();
  });

  it.each(['grpc-v1', 'grpc-v1alpha'])('serves reflection that buf curl accepts over %s', async (protocol) => {
    const url = `http://${server.address}`;
    const services = await bufCurl('--reflect-protocol', protocol, '--list-services', url);
    expect(services.split('\n').filter(Boolean).toSorted()).toEqual([
      'grpc.health.v1.Health',
      'grpc.reflection.v1.ServerReflection',
      'grpc.reflection.v1alpha.ServerReflection',
      'ojs.server.v1.JobService',
      'ojs.server.v1.OperatorService',
      'ojs.server.v1.ScheduleService',
      'ojs.server.v1.WorkerService',
      'ojs.server.v1.WorkflowService',
    ]);
    expect(await bufCurl('--reflect-protocol', protocol, '--list-methods', url)).toContain('ojs.server.v1.WorkerService/Beat');
    const reply = JSON.parse(
      await bufCurl(
        '--reflect-protocol',
        protocol,
        '-d',
        '{"jobs":[{"type":"reflected.call","args":[1,"two",{"three":3}]}]}',
        `${url}/ojs.server.v1.JobService/Enqueue`,
      ),
    ) as { jobs: { type: string; args: unknown[]; state: string }[] };
    expect(reply.jobs[0]).toMatchObject({ type: 'reflected.call', args: [1, 'two', { three: 3 }], state: 'JOB_STATE_AVAILABLE' });
  });

  it("answers every unary call of the README's buf curl block", async () => {
    const calls = readmeBufCurlCalls();
    expect(calls.map(([path]) => path.split('/')[1])).toEqual(
      expect.arrayContaining([
        'GetQueueStats',
        'ListJobs',
        'WaitForJob',
        'RegisterSchedule',
        'DeleteSchedule',
        'CreateWorkflow',
        'CancelWorkflow',
      ]),
    );
    let workflowId: string | undefined;
    const worker = await TestWorker.register(clients, { queues: ['emails'] });
    const [job] = (await clients.jobs.enqueue({ jobs: [{ type: 'email.send', queue: 'emails' }] })).jobs;
    for (const [path, body] of calls) {
      const request = body
        .replaceAll('"worker_id":"<id>"', `"worker_id":"${worker.workerId}"`)
        .replaceAll('"workflow_id":"<id>"', `"workflow_id":"${workflowId ?? '<id>'}"`)
        .replaceAll('<id>', job!.id);
      const answer = await bufCurl('-d', request, `http://${server.address}/${path}`);
      const reply: unknown = JSON.parse(answer);
      expect([path, typeof reply]).toEqual([path, 'object']);
      if (path.endsWith('/CreateWorkflow')) workflowId = (reply as { workflow: { id: string } }).workflow.id;
    }
    expect((await clients.jobs.getJob({ jobId: job!.id })).job).toMatchObject({ state: JobState.JOB_STATE_CANCELLED });
  });
});
