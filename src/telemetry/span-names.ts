/** Span and attribute names (ojs-distributed-tracing sections 4 and 5). */
export const SPAN = {
  jobTransition: 'ojs.job.transition',
  workerTransition: 'ojs.worker.transition',
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
} as const;
