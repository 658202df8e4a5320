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
import { DEFAULT_OPEN_SERVICE_ACCESS, methodRules, type OpenServiceAccess } from '../../src/transport/grpc/method-rules';
import { JobServiceDefinition } from '../../gen/ojs/server/v1/job_service';
import { OperatorServiceDefinition, WatchEventsRequest } from '../../gen/ojs/server/v1/operator_service';
import { ScheduleServiceDefinition } from '../../gen/ojs/server/v1/schedule_service';
import { WorkflowServiceDefinition } from '../../gen/ojs/server/v1/workflow_service';
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
const SCHEDULES = 'ojs.server.v1.ScheduleService';
const WORKFLOWS = 'ojs.server.v1.WorkflowService';
const EXPECTED_ACCESS: Record<Role, Record<string, readonly string[]>> = {
  producer: { 'ojs.server.v1.JobService': ['*'], [SCHEDULES]: ['*'], [WORKFLOWS]: ['*'] },
  worker: { 'ojs.server.v1.WorkerService': ['*'] },
  reader: {
    'ojs.server.v1.JobService': ['GetJob', 'WaitForJob'],
    'ojs.server.v1.OperatorService': READ_ONLY_OPERATOR_CALLS,
    [SCHEDULES]: ['GetSchedule', 'ListSchedules'],
    [WORKFLOWS]: ['GetWorkflow'],
  },
  operator: { 'ojs.server.v1.JobService': ['*'], 'ojs.server.v1.OperatorService': ['*'], [SCHEDULES]: ['*'], [WORKFLOWS]: ['*'] },
  admin: {
    'ojs.server.v1.JobService': ['*'],
    'ojs.server.v1.WorkerService': ['*'],
    'ojs.server.v1.OperatorService': ['*'],
    [SCHEDULES]: ['*'],
    [WORKFLOWS]: ['*'],
  },
};
const HEALTH_SERVICE = 'grpc.health.v1.Health';
const REFLECTION_SERVICES = new Set(['grpc.reflection.v1.ServerReflection', 'grpc.reflection.v1alpha.ServerReflection']);
/** Listed by reflection (the descriptor set holds the whole health proto) but not served by grpc-js. */
const UNSERVED = 'grpc.health.v1.Health/List';

type Outcome = 'passed' | 'refused' | 'absent';

/** An open service passes everyone; one for principals passes every role and refuses nobody. */
function openServiceOutcome(role: Role | 'nobody', access: 'open' | 'authenticated'): Outcome {
  return access === 'open' || role !== 'nobody' ? 'passed' : 'refused';
}

function expectedOutcome(role: Role | 'nobody', method: string, access: OpenServiceAccess): Outcome {
  const [service, name] = method.split('/') as [string, string];
  if (method === UNSERVED) return 'absent';
  if (service === HEALTH_SERVICE) return openServiceOutcome(role, access.health);
  if (REFLECTION_SERVICES.has(service)) return access.reflection === 'off' ? 'absent' : openServiceOutcome(role, access.reflection);
  if (role === 'nobody') return 'refused';
  const allowed = EXPECTED_ACCESS[role][service] ?? [];
  return allowed.includes('*') || allowed.includes(name) ? 'passed' : 'refused';
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
  ...[
    JobServiceDefinition,
    WorkerServiceDefinition,
    OperatorServiceDefinition,
    ScheduleServiceDefinition,
    WorkflowServiceDefinition,
    HealthDefinition,
  ].flatMap((definition: Definition) =>
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

/** The methods reflection lists, as `buf curl` sees them; `token` authenticates the listing. */
async function listMethods(address: string, token?: string): Promise<string[]> {
  const header = token === undefined ? [] : ['--reflect-header', `authorization: Bearer ${token}`];
  const { stdout } = await run(
    BUF,
    ['curl', '--protocol', 'grpc', '--http2-prior-knowledge', ...header, '--list-methods', `http://${address}`],
    { timeout: 15_000 },
  );
  return stdout.split('\n').filter(Boolean);
}

/** Calls every method as `role` and says, per method, whether it passed, was refused or is not served. */
async function outcomesOf(server: TestServer, role: Role | 'nobody', methods: readonly string[]): Promise<string[]> {
  const metadata = new Metadata();
  if (role !== 'nobody') metadata.set('authorization', `Bearer ${role}-token`);
  const caller = new RawCaller(server.address, metadata);
  try {
    const outcomes: string[] = [];
    for (const method of methods) {
      const { code, details } = await call(caller, method);
      expect([method, code === Code.DEADLINE_EXCEEDED ? details : 'ended']).toEqual([method, 'ended']);
      const refusal = role === 'nobody' ? Code.UNAUTHENTICATED : Code.PERMISSION_DENIED;
      outcomes.push(`${method}: ${code === refusal ? 'refused' : code === Code.UNIMPLEMENTED ? 'absent' : 'passed'}`);
    }
    return outcomes;
  } finally {
    caller.close();
  }
}

describe('authorisation of every method', () => {
  let dir: string;
  let authFile: string;
  const servers: TestServer[] = [];
  /** Every method the server can serve, as clients discover it through reflection on a default server. */
  let methods: string[];

  async function startServer(access: OpenServiceAccess): Promise<TestServer> {
    const server = await TestServer.start({
      security: { authFile, reloadIntervalMs: 60_000, healthAccess: access.health, reflectionAccess: access.reflection },
    });
    servers.push(server);
    return server;
  }

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'ojs-rules-'));
    authFile = join(dir, 'principals.json');
    writeFileSync(
      authFile,
      JSON.stringify({ principals: ROLES.map((role) => ({ name: role, roles: [role], token_sha256: sha256(`${role}-token`) })) }),
    );
    methods = await listMethods((await startServer(DEFAULT_OPEN_SERVICE_ACCESS)).address);
  });
  afterAll(async () => {
    for (const server of servers) await server.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  it('has a rule for every method reflection lists, and none for a method the server does not serve', () => {
    expect(methods.length).toBeGreaterThan(30);
    const served = methods.map((method) => `/${method}`);
    const rules = methodRules();
    expect(served.filter((path) => !rules.has(path))).toEqual([]);
    expect([...rules.keys()].filter((path) => !served.includes(path))).toEqual([]);
  });

  it('has no rules for reflection when it is off, and the same paths otherwise whoever may use health and reflection', () => {
    const paths = (access: OpenServiceAccess): string[] => [...methodRules(access).keys()].toSorted();
    const all = paths(DEFAULT_OPEN_SERVICE_ACCESS);
    expect(paths({ health: 'authenticated', reflection: 'authenticated' })).toEqual(all);
    expect(paths({ health: 'authenticated', reflection: 'off' })).toEqual(
      all.filter((path) => !REFLECTION_SERVICES.has(path.split('/')[1]!)),
    );
  });

  describe.each<[string, OpenServiceAccess]>([
    ['open health and reflection (the default)', DEFAULT_OPEN_SERVICE_ACCESS],
    ['health and reflection for principals only', { health: 'authenticated', reflection: 'authenticated' }],
    ['open health, reflection off', { health: 'open', reflection: 'off' }],
  ])('with %s', (_title, access) => {
    let server: TestServer;
    beforeAll(async () => {
      server = await startServer(access);
    });

    it.each([...ROLES, 'nobody' as const])('lets a %s call exactly the methods its role allows', async (role) => {
      const expected = methods.map((method) => `${method}: ${expectedOutcome(role, method, access)}`);
      expect(await outcomesOf(server, role, methods)).toEqual(expected);
    });
  });

  it('lists methods through reflection for principals only when reflection is authenticated', async () => {
    const server = await startServer({ health: 'open', reflection: 'authenticated' });
    expect(await listMethods(server.address, 'worker-token')).toEqual(methods);
    // buf reports the server's UNAUTHENTICATED in words of its own.
    const refusal = await listMethods(server.address).then(
      (listed) => `listed ${listed.length} methods`,
      (error: unknown) => (error instanceof Error && 'stderr' in error ? String(error.stderr) : String(error)),
    );
    expect(refusal).toMatch(/not authenticated/);
  });
});
