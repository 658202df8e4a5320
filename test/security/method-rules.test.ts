import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { Metadata, status as Code } from '@grpc/grpc-js';
import { HealthDefinition } from 'nice-grpc-server-health';
import { ServerReflectionService } from 'nice-grpc-server-reflection';
import { ROLES, type Role } from '../../src/domain/principal';
import { METHOD_RULES } from '../../src/transport/grpc/method-rules';
import { JobServiceDefinition } from '../../gen/ojs/server/v1/job_service';
import { OperatorServiceDefinition, WatchEventsRequest } from '../../gen/ojs/server/v1/operator_service';
import { WorkerServiceDefinition } from '../../gen/ojs/server/v1/worker_service';
import { RawCaller, type CallOutcome } from '../fuzz/raw-caller';
import { TestServer } from '../support/test-server';

const run = promisify(execFile);
const BUF = join(__dirname, '..', '..', 'node_modules', '.bin', 'buf');
const sha256 = (token: string): string => createHash('sha256').update(token).digest('hex');

/**
 * Who may call what, written out here independently of the server's table
 * (method-rules.ts), by service and method name. '*' is every method of
 * the service.
 */
const READ_ONLY_OPERATOR_CALLS = ['ListWorkers', 'ListQueues', 'WatchEvents', 'ListJobs', 'GetQueueStats'];
const EXPECTED_ACCESS: Record<Role, Record<string, readonly string[]>> = {
  producer: { 'ojs.server.v1.JobService': ['*'] },
  worker: { 'ojs.server.v1.WorkerService': ['*'] },
  reader: { 'ojs.server.v1.JobService': ['GetJob', 'WaitForJob'], 'ojs.server.v1.OperatorService': READ_ONLY_OPERATOR_CALLS },
  operator: { 'ojs.server.v1.JobService': ['*'], 'ojs.server.v1.OperatorService': ['*'] },
  admin: { 'ojs.server.v1.JobService': ['*'], 'ojs.server.v1.WorkerService': ['*'], 'ojs.server.v1.OperatorService': ['*'] },
};
const OPEN_SERVICES = new Set(['grpc.health.v1.Health', 'grpc.reflection.v1.ServerReflection', 'grpc.reflection.v1alpha.ServerReflection']);

function expectedToPass(role: Role | 'nobody', method: string): boolean {
  const [service, name] = method.split('/') as [string, string];
  if (OPEN_SERVICES.has(service)) return true;
  if (role === 'nobody') return false;
  const allowed = EXPECTED_ACCESS[role][service] ?? [];
  return allowed.includes('*') || allowed.includes(name);
}

interface Shape {
  requestStream: boolean;
  responseStream: boolean;
}

interface Definition {
  fullName: string;
  methods: Record<string, Shape & { name: string }>;
}

/** Whether each method streams, from the definitions the server serves. */
const SHAPES = new Map<string, Shape>([
  ...[JobServiceDefinition, WorkerServiceDefinition, OperatorServiceDefinition, HealthDefinition].flatMap((definition: Definition) =>
    Object.values(definition.methods).map((m): [string, Shape] => [`${definition.fullName}/${m.name}`, m]),
  ),
  ['grpc.health.v1.Health/List', { requestStream: false, responseStream: false }],
  ...['grpc.reflection.v1.ServerReflection', 'grpc.reflection.v1alpha.ServerReflection'].map(
    (service): [string, { requestStream: boolean; responseStream: boolean }] => [
      `${service}/ServerReflectionInfo`,
      ServerReflectionService.serverReflectionInfo,
    ],
  ),
]);

/** A request that ends quickly once authorised: empty, except for WatchEvents, told to resume after an event that never was. */
function requestFor(method: string): Uint8Array {
  if (method === 'ojs.server.v1.OperatorService/WatchEvents')
    return WatchEventsRequest.encode(WatchEventsRequest.fromPartial({ after: 'no-such-event' })).finish();
  return new Uint8Array();
}

function call(caller: RawCaller, method: string): Promise<CallOutcome> {
  const shape = SHAPES.get(method);
  if (shape === undefined) throw new Error(`no shape known for ${method}: add its definition to SHAPES`);
  const path = `/${method}`;
  const plan = { cancelOnMessage: true };
  if (shape.requestStream) return caller.bidiStream(path, [requestFor(method)], 5_000, plan);
  if (shape.responseStream) return caller.serverStream(path, requestFor(method), 5_000, plan);
  return caller.unary(path, requestFor(method), 5_000);
}

describe('authorisation of every method', () => {
  let server: TestServer;
  let dir: string;
  let methods: string[];

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'ojs-rules-'));
    const authFile = join(dir, 'principals.json');
    writeFileSync(
      authFile,
      JSON.stringify({ principals: ROLES.map((role) => ({ name: role, roles: [role], token_sha256: sha256(`${role}-token`) })) }),
    );
    server = await TestServer.start({ security: { authFile, reloadIntervalMs: 60_000 } });
    // The full list of methods, as clients discover it through reflection.
    const { stdout } = await run(
      BUF,
      ['curl', '--protocol', 'grpc', '--http2-prior-knowledge', '--list-methods', `http://${server.address}`],
      { timeout: 15_000 },
    );
    methods = stdout.split('\n').filter(Boolean);
  });
  afterAll(async () => {
    await server.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  it('has a rule for every method reflection lists, and none for a method the server does not serve', () => {
    expect(methods.length).toBeGreaterThan(30);
    const served = methods.map((method) => `/${method}`);
    expect(served.filter((path) => !METHOD_RULES.has(path))).toEqual([]);
    expect([...METHOD_RULES.keys()].filter((path) => !served.includes(path))).toEqual([]);
  });

  it.each([...ROLES, 'nobody' as const])('lets a %s call exactly the methods its role allows', async (role) => {
    const metadata = new Metadata();
    if (role !== 'nobody') metadata.set('authorization', `Bearer ${role}-token`);
    const caller = new RawCaller(server.address, metadata);
    try {
      const outcomes: string[] = [];
      const expected: string[] = [];
      for (const method of methods) {
        const { code, details } = await call(caller, method);
        expect([method, code === Code.DEADLINE_EXCEEDED ? details : 'ended']).toEqual([method, 'ended']);
        const refusal = role === 'nobody' ? Code.UNAUTHENTICATED : Code.PERMISSION_DENIED;
        outcomes.push(`${method}: ${code === refusal ? 'refused' : 'passed'}`);
        expected.push(`${method}: ${expectedToPass(role, method) ? 'passed' : 'refused'}`);
      }
      expect(outcomes).toEqual(expected);
    } finally {
      caller.close();
    }
  });
});
