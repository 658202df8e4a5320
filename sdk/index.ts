/**
 * The OJS TypeScript SDK: a Worker that speaks the worker protocol (each
 * handler in an OpenTelemetry span that continues the job's trace), and a
 * Producer that enqueues and waits for results. It stands on the generated
 * contract (gen/) alone.
 */
export { Worker, type WorkerPhase } from './worker';
export type { WorkerOptions } from './worker-options';
export type { JobContext, JobHandler } from './job-context';
export type { ExecutionMiddleware } from './job-runner';
export { Producer, type EnqueueMiddleware, type JobSpec, type ProducerOptions } from './producer';
export { JobFailure, JobAborted, type AbortKind, type FailureCode } from './errors';
export { JobFailedError, JobCancelledError, JobWaitTimeoutError } from './job-outcome';
export type { ResultOptions } from './job-waiter';
export type { Middleware } from './middleware';
export type { Logger } from './logger';
export { JobState, type Job, type JobError } from '../gen/ojs/server/v1/job';
