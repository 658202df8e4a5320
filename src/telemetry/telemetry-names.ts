/** Span and attribute names (ojs-distributed-tracing sections 4 and 5). */
export const SPAN = {
  jobTransition: 'ojs.job.transition',
  workerTransition: 'ojs.worker.transition',
  /** A timeout event (timeouts.md 11.1), as a child of its transition's span. */
  jobEvent: 'ojs.job.event',
  /** ojs-events 8.4: "ojs.workflow {workflow_name}"; the name is added when the workflow has one. */
  workflow: 'ojs.workflow',
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
  workflowId: 'ojs.workflow.id',
  workflowType: 'ojs.workflow.type',
  workflowName: 'ojs.workflow.name',
  workflowJobCount: 'ojs.workflow.job_count',
  eventType: 'ojs.event.type',
  timeoutKind: 'ojs.timeout.kind',
  limitSeconds: 'ojs.timeout.limit_seconds',
  elapsedSeconds: 'ojs.timeout.elapsed_seconds',
  /** On error spans (ojs-distributed-tracing 5.5). */
  errorType: 'error.type',
  errorMessage: 'error.message',
} as const;

/** Metric names: ojs-events 7.2 (`ojs.jobs.*`, `ojs.queue.*`, `ojs.dead_letter.*`) and timeouts.md 11.2 (`ojs.job.*`). */
export const METRIC = {
  jobsEnqueued: 'ojs.jobs.enqueued',
  jobsCompleted: 'ojs.jobs.completed',
  jobsFailed: 'ojs.jobs.failed',
  jobsRetried: 'ojs.jobs.retried',
  jobsDiscarded: 'ojs.jobs.discarded',
  jobsDuration: 'ojs.jobs.duration_ms',
  jobsWait: 'ojs.jobs.wait_ms',
  queueDepth: 'ojs.queue.depth',
  queueActive: 'ojs.queue.active',
  deadLetterDepth: 'ojs.dead_letter.depth',
  /** Ours: every state, so one gauge answers "how many jobs are where". */
  queueJobs: 'ojs.queue.jobs',
  timeoutCount: 'ojs.job.timeout.count',
  executionDuration: 'ojs.job.execution.duration',
  heartbeatAge: 'ojs.job.heartbeat.age',
  enqueueWait: 'ojs.job.enqueue.wait_time',
} as const;

/**
 * Bucket boundaries, given as the histograms' advice so that they apply
 * under whatever SDK the deployment configures (a view the user sets still
 * wins). The millisecond ones are ojs-events 7.2's defaults.
 */
export const BUCKETS = {
  durationMs: [5, 10, 25, 50, 100, 250, 500, 1000, 2500, 5000, 10000, 30000, 60000, 300000],
  waitMs: [10, 50, 100, 500, 1000, 5000, 10000, 30000, 60000, 300000, 600000],
  /**
   * For the seconds-valued histograms of timeouts.md: from a millisecond to
   * an hour (the SDK's defaults, 0 to 10000 in coarse steps, put every
   * sub-second value in one bucket).
   */
  seconds: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300, 600, 1800, 3600],
} as const;
