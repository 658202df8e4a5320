import type { Job } from '../../../domain/job';
import { readArray } from '../reply';
import { appendBatch, arg, declareScript } from '../script';
import { readJob } from './replies';

/** Jobs by id, in order; undefined for unknown ids (lua/get-jobs.lua). */
export const getJobsScript = declareScript({
  name: 'get-jobs',
  isReadOnly: true,
  encode: (jobIds: readonly string[]) => appendBatch([], ['jobId'], jobIds, (jobId) => ({ jobId: arg.id(jobId, 'job id') })),
  decode: (reply): (Job | undefined)[] => readArray(reply, 'jobs').map(readJob),
});
