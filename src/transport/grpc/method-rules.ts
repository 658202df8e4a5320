import { HealthDefinition } from 'nice-grpc-server-health';
import type { Principal, Role } from '../../domain/principal';
import { JobServiceDefinition } from '../../../gen/ojs/server/v1/job_service';
import { OperatorServiceDefinition } from '../../../gen/ojs/server/v1/operator_service';
import { ScheduleServiceDefinition } from '../../../gen/ojs/server/v1/schedule_service';
import { WorkerServiceDefinition } from '../../../gen/ojs/server/v1/worker_service';
import { WorkflowServiceDefinition } from '../../../gen/ojs/server/v1/workflow_service';
import { REFLECTION_METHOD_PATHS } from './reflection';

/**
 * Who may call a method: 'open' for anyone, authenticated or not,
 * 'authenticated' for any principal the auth file knows, whatever its
 * roles, otherwise the roles that may. The admin role may call everything;
 * it is listed on each rule so that the table reads whole.
 */
export type MethodRule = 'open' | 'authenticated' | readonly Role[];

/** Who may check health on the main port. The plaintext health port (health-server.ts) is open whatever this says. */
export type HealthAccess = 'open' | 'authenticated';
/** Who may use reflection; 'off' does not serve it at all. */
export type ReflectionAccess = 'open' | 'authenticated' | 'off';

/**
 * Who may use the services that are not the job queue's. Both are open by
 * default: health checks come from kubelets and load balancers that carry
 * no credentials, and reflection (for grpcurl and buf curl) reveals only the
 * public contract. A deployment that wants to reveal nothing to strangers
 * closes them (README "Security").
 */
export interface OpenServiceAccess {
  health: HealthAccess;
  reflection: ReflectionAccess;
}

export const DEFAULT_OPEN_SERVICE_ACCESS: OpenServiceAccess = { health: 'open', reflection: 'open' };

const OPEN = 'open';
const AUTHENTICATED = 'authenticated';
const PRODUCERS: readonly Role[] = ['producer', 'operator', 'admin'];
/** Reading a job's envelope or waiting for its result: what producers do after Enqueue, and operators and readers inspect. */
const JOB_READERS: readonly Role[] = ['producer', 'operator', 'reader', 'admin'];
const WORKERS: readonly Role[] = ['worker', 'admin'];
const READERS: readonly Role[] = ['reader', 'operator', 'admin'];
const OPERATORS: readonly Role[] = ['operator', 'admin'];

interface ServiceDefinition {
  fullName: string;
  methods: Record<string, { name: string }>;
}

/** A service's rules, keyed as its definition keys its methods: a method without a rule does not compile. */
function rulesOf<D extends ServiceDefinition>(definition: D, rules: Record<keyof D['methods'], MethodRule>): [string, MethodRule][] {
  return Object.entries(definition.methods).map(([key, method]) => [`/${definition.fullName}/${method.name}`, rules[key]!]);
}

/** The job queue's methods: who may call each is fixed. */
const OJS_RULES: [string, MethodRule][] = [
  ...rulesOf(JobServiceDefinition, {
    enqueue: PRODUCERS,
    getJob: JOB_READERS,
    cancelJob: PRODUCERS,
    activateJob: PRODUCERS,
    retryJob: PRODUCERS,
    waitForJob: JOB_READERS,
  }),
  ...rulesOf(WorkerServiceDefinition, {
    register: WORKERS,
    deregister: WORKERS,
    fetch: WORKERS,
    ack: WORKERS,
    ackBatch: WORKERS,
    fail: WORKERS,
    failBatch: WORKERS,
    beat: WORKERS,
    extendLease: WORKERS,
    reportProgress: WORKERS,
  }),
  ...rulesOf(OperatorServiceDefinition, {
    listWorkers: READERS,
    setWorkerState: OPERATORS,
    listQueues: READERS,
    watchEvents: READERS,
    listJobs: READERS,
    cancelJobs: OPERATORS,
    retryJobs: OPERATORS,
    deleteJobs: OPERATORS,
    pauseQueue: OPERATORS,
    resumeQueue: OPERATORS,
    getQueueStats: READERS,
    setQueueLimits: OPERATORS,
  }),
  // A schedule enqueues jobs: who may enqueue may schedule.
  ...rulesOf(ScheduleServiceDefinition, {
    registerSchedule: PRODUCERS,
    getSchedule: JOB_READERS,
    listSchedules: JOB_READERS,
    deleteSchedule: PRODUCERS,
    pauseSchedule: PRODUCERS,
    resumeSchedule: PRODUCERS,
  }),
  // A workflow is jobs: who may enqueue and cancel jobs may create and cancel one; who may read jobs may read it.
  ...rulesOf(WorkflowServiceDefinition, {
    createWorkflow: PRODUCERS,
    getWorkflow: JOB_READERS,
    cancelWorkflow: PRODUCERS,
  }),
];

/**
 * The authorisation table: every method the server serves, by its full
 * path, and who may call it. A path missing here is refused to everyone
 * (test/security/method-rules.test.ts walks the methods reflection lists
 * to keep it complete). Reflection turned off has no rules: it is not served.
 */
export function methodRules(access: OpenServiceAccess = DEFAULT_OPEN_SERVICE_ACCESS): ReadonlyMap<string, MethodRule> {
  const health: MethodRule = access.health === 'open' ? OPEN : AUTHENTICATED;
  const reflection: MethodRule = access.reflection === 'open' ? OPEN : AUTHENTICATED;
  return new Map([
    ...OJS_RULES,
    ...rulesOf(HealthDefinition, { check: health, watch: health }),
    // Reflection lists List (the descriptor set holds the whole health proto); grpc-js answers it UNIMPLEMENTED.
    ['/grpc.health.v1.Health/List', health],
    ...(access.reflection === 'off' ? [] : REFLECTION_METHOD_PATHS.map((path): [string, MethodRule] => [path, reflection])),
  ]);
}

/** Whether `principal` may call a method whose rule is `rule` (any principal may when it asks only for one). */
export function isAllowed(rule: Exclude<MethodRule, 'open'>, principal: Principal): boolean {
  return rule === AUTHENTICATED || rule.some((role) => principal.roles.has(role));
}
