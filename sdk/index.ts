/**
 * The OJS TypeScript SDK: a Worker that speaks the worker protocol, and a
 * Producer that enqueues. It stands on the generated contract (gen/) alone.
 */
export { Worker, type WorkerPhase } from './worker';
export type { WorkerOptions } from './worker-options';
export type { JobContext, JobHandler } from './job-context';
export type { ExecutionMiddleware } from './job-runner';
export { Producer, type EnqueueMiddleware, type JobSpec, type ProducerOptions } from './producer';
export { JobFailure, JobAborted, type AbortKind, type FailureCode } from './errors';
export type { Middleware } from './middleware';
export type { Logger } from './logger';
export { JobState, type Job } from '../gen/ojs/server/v1/job';
