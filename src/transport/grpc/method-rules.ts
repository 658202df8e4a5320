import { HealthDefinition } from 'nice-grpc-server-health';
import type { Principal, Role } from '../../domain/principal';
import { JobServiceDefinition } from '../../../gen/ojs/server/v1/job_service';
import { OperatorServiceDefinition } from '../../../gen/ojs/server/v1/operator_service';
import { WorkerServiceDefinition } from '../../../gen/ojs/server/v1/worker_service';
import { REFLECTION_METHOD_PATHS } from './reflection';

/**
 * Who may call a method: OPEN for anyone, authenticated or not (health
 * checks from kubelets and load balancers, reflection for grpcurl and buf
 * curl, which reveal only the public contract), otherwise the roles that
 * may. The admin role may call everything; it is listed on each rule so
 * that the table reads whole.
 */
export type MethodRule = 'open' | readonly Role[];

const OPEN = 'open';
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

/**
 * The authorisation table: every method the server serves, by its full
 * path, and who may call it. A path missing here is refused to everyone
 * (test/security/method-rules.test.ts walks the methods reflection lists
 * to keep it complete).
 */
export const METHOD_RULES: ReadonlyMap<string, MethodRule> = new Map([
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
  }),
  ...rulesOf(HealthDefinition, { check: OPEN, watch: OPEN }),
  // Reflection lists List (the descriptor set holds the whole health proto); grpc-js answers it UNIMPLEMENTED.
  ['/grpc.health.v1.Health/List', OPEN],
  ...REFLECTION_METHOD_PATHS.map((path): [string, MethodRule] => [path, OPEN]),
]);

/** The rule of the method at `path`; undefined for a path the table does not know (refused). */
export function ruleOf(path: string): MethodRule | undefined {
  return METHOD_RULES.get(path);
}

/** Whether `principal` holds one of the roles `rule` allows. */
export function isAllowed(rule: readonly Role[], principal: Principal): boolean {
  return rule.some((role) => principal.roles.has(role));
}
