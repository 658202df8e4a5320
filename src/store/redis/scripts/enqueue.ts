import type { Job } from '../../../domain/job';
import { uniqueConflict } from '../../../domain/errors';
import type { EnqueueOutcome } from '../../job-store';
import { readArray, readInteger, readStatus, readString } from '../reply';
import { arg, declareScript } from '../script';
import { refusalError } from '../script-errors';
import { appendNewJobs, readNewJobOutcome } from './new-jobs';

/** Stores new jobs, all or none (lua/enqueue.lua). A batch is built at one instant, its creation time. */
export const enqueueScript = declareScript({
  name: 'enqueue',
  encode: (jobs: readonly Job[], settings) => {
    const now = jobs[0]?.createdAt ?? 0;
    return appendNewJobs([arg.int(now, 'now')], jobs, now, settings);
  },
  decode(reply, jobs): EnqueueOutcome[] {
    const { status, rest } = readStatus(reply, 'enqueue');
    if (status === 'unique') {
      const [index, holderId, holderState, key] = rest;
      throw uniqueConflict(
        `jobs[${readInteger(index, 'unique job index')}].unique`,
        readString(holderId, 'unique holder id'),
        readString(holderState, 'unique holder state'),
        readString(key, 'unique key'),
      );
    }
    if (status !== 'ok') throw refusalError({ status, jobId: readString(rest[0], 'duplicate job id') });
    return readArray(rest[0], 'enqueue outcomes').map((outcome, i) => readNewJobOutcome(outcome, jobs[i]!));
  },
});
