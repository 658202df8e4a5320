import * as fc from 'fast-check';
import type { Job } from '../../../src/domain/job';
import { decodeJob, encodeBody } from '../../../src/store/redis/job-codec';
import { propertyParameters } from '../../support/property';
import { jobs } from '../support/job-arbitrary';

/** What a job's body holds: the envelope's parts that never change after enqueue. */
const BODY_FIELDS = [
  'specversion',
  'id',
  'type',
  'queue',
  'args',
  'meta',
  'priority',
  'timeoutMs',
  'gracePeriodMs',
  'heartbeatTimeoutMs',
  'visibilityTimeoutMs',
  'totalTimeoutMs',
  'enqueueTtlMs',
  'scheduledAt',
  'expiresAt',
  'retry',
  'schema',
  'unique',
  'createdAt',
  'workflow',
] as const satisfies readonly (keyof Job)[];

const bodyFields = (job: Job): Partial<Job> => Object.fromEntries(BODY_FIELDS.map((field) => [field, job[field]]));

const asJson = <T>(value: T): T => JSON.parse(JSON.stringify(value)) as T;

describe('a job body', () => {
  it('reads back as the job it was written from, and holds only the fields the job has', () => {
    fc.assert(
      fc.property(jobs, (job) => {
        const body = encodeBody(job);
        const read = decodeJob({ body, state: job.state, attempt: String(job.attempt) })!;
        // As JSON holds them: JSON has no negative zero, which an arg may be.
        const expected = { ...bodyFields(job), args: asJson(job.args), meta: asJson(job.meta) };
        expect(bodyFields(read)).toEqual(expected);
        const written = Object.entries(JSON.parse(body) as Record<string, unknown>);
        expect(written.filter(([, value]) => value === null || value === undefined)).toEqual([]);
      }),
      propertyParameters(300),
    );
  });
});
