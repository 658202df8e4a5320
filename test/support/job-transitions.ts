import type { JobTransition } from '../../src/domain/transition';

/** A held job completed by its worker: the transition ack.lua and the memory store report for it. */
export const COMPLETION: Readonly<JobTransition> = Object.freeze({
  at: 1_795_000_000_500,
  jobId: '01a225d5-e24e-7a06-a32a-9748d849949e',
  jobType: 'email.send',
  queue: 'mail',
  from: 'active',
  to: 'completed',
  attempt: 1,
  workerId: 'w1',
  startedAt: 1_795_000_000_000,
});
