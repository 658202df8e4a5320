/** Span and attribute names (ojs-distributed-tracing sections 4 and 5). */
export const SPAN = {
  jobTransition: 'ojs.job.transition',
  workerTransition: 'ojs.worker.transition',
  jobEvent: 'ojs.job.event',
} as const;

export const ATTR = {
  messagingSystem: 'messaging.system',
  jobId: 'ojs.job.id',
  jobType: 'ojs.job.type',
  jobQueue: 'ojs.job.queue',
  jobAttempt: 'ojs.job.attempt',
  jobState: 'ojs.job.state',
  jobStateFrom: 'ojs.job.state.from',
  jobStateTo: 'ojs.job.state.to',
  workerId: 'ojs.worker.id',
  workerStateFrom: 'ojs.worker.state.from',
  workerStateTo: 'ojs.worker.state.to',
  workerReason: 'ojs.worker.reason',
  eventType: 'ojs.event.type',
  timeoutKind: 'ojs.timeout.kind',
  limitSeconds: 'ojs.timeout.limit_seconds',
  elapsedSeconds: 'ojs.timeout.elapsed_seconds',
} as const;

/** Metric names of timeouts.md section 11.2. */
export const METRIC = {
  timeoutCount: 'ojs.job.timeout.count',
  executionDuration: 'ojs.job.execution.duration',
  heartbeatAge: 'ojs.job.heartbeat.age',
  enqueueWait: 'ojs.job.enqueue.wait_time',
} as const;
