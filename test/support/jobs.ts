import type { Job } from '../../gen/ojs/server/v1/job';
import type { Clients } from './test-server';

/** A job envelope with only what a producer sets; the rest takes defaults. */
export function jobSpec(overrides: Partial<Job> = {}): Job {
  return {
    specversion: '',
    id: '',
    type: 'test.job',
    queue: 'default',
    args: [],
    meta: undefined,
    priority: 0,
    timeout: 0,
    scheduledAt: undefined,
    expiresAt: undefined,
    retry: undefined,
    visibilityTimeout: 0,
    schema: '',
    state: 0,
    attempt: 0,
    createdAt: undefined,
    enqueuedAt: undefined,
    startedAt: undefined,
    completedAt: undefined,
    error: undefined,
    errors: [],
    result: undefined,
    nextRetryAt: undefined,
    workerId: '',
    deadLetter: false,
    ...overrides,
  };
}

export async function enqueue(clients: Clients, ...jobs: Partial<Job>[]): Promise<Job[]> {
  const response = await clients.jobs.enqueue({ jobs: jobs.map(jobSpec) });
  return response.jobs;
}

export async function enqueueOne(clients: Clients, job: Partial<Job> = {}): Promise<Job> {
  const [stored] = await enqueue(clients, job);
  return stored!;
}

export async function getJob(clients: Clients, jobId: string): Promise<Job> {
  return (await clients.jobs.getJob({ jobId })).job!;
}
