import { Job, type DeepPartial } from '../../gen/ojs/server/v1/job';
import type { Clients } from './test-server';

/** A job envelope with only what a producer sets; every other field takes its proto default. */
export function jobSpec(overrides: DeepPartial<Job> = {}): Job {
  return Job.fromPartial({ type: 'test.job', ...overrides });
}

export async function enqueue(clients: Clients, ...jobs: DeepPartial<Job>[]): Promise<Job[]> {
  const response = await clients.jobs.enqueue({ jobs: jobs.map(jobSpec) });
  return response.jobs;
}

export async function enqueueOne(clients: Clients, job: DeepPartial<Job> = {}): Promise<Job> {
  const [stored] = await enqueue(clients, job);
  return stored!;
}

export async function getJob(clients: Clients, jobId: string): Promise<Job> {
  return (await clients.jobs.getJob({ jobId })).job!;
}
