/**
 * The OJS TypeScript SDK: a Worker that speaks the worker protocol (each
 * handler in an OpenTelemetry span that continues the job's trace), and a
 * Producer that enqueues and waits for results. It stands on the generated
 * contract (its own generated code, in gen/) alone. Jobs come out with their
 * enums as names (`state: 'completed'`), the OJS specifications' names.
 */
export { Worker, type WorkerPhase } from './worker';
export type { WorkerOptions } from './worker-options';
export {
  resolveChannelSecurity,
  bearerToken,
  type ChannelSecurity,
  type SecurityOptions,
  type TlsOptions,
  type Pem,
} from './channel-security';
export type { JobContext, JobHandler } from './job-context';
export type { ExecutionMiddleware } from './job-runner';
export { Producer, type EnqueueMiddleware, type ProducerOptions } from './producer';
export type { JobSpec } from './job-spec';
export type { Schedule, ScheduleSpec, OverlapPolicy, MissedTickPolicy } from './schedules';
export {
  chain,
  group,
  batch,
  type WorkflowSpec,
  type ChainSpec,
  type GroupSpec,
  type BatchSpec,
  type BatchCallbacksSpec,
  type WorkflowElementSpec,
  type WorkflowJobSpec,
  type Workflow,
  type WorkflowStep,
  type WorkflowTypeName,
  type WorkflowStateName,
  type WorkflowStepRoleName,
  type WorkflowStepStateName,
  type WorkflowStepCancelReasonName,
} from './workflows';
export { JobFailure, JobAborted, type AbortKind, type FailureCode } from './errors';
export { JobFailedError, JobCancelledError, JobWaitTimeoutError } from './job-outcome';
export type { ResultOptions } from './job-waiter';
export type { Middleware } from './middleware';
export type { Logger } from './logger';
export type { Job, JobError, RetryPolicy, JobStateName, HandlerCodeName, OnExhaustionName } from './job';
