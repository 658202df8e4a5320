import type { ProgressParams } from '../../job-store';
import { readInteger, readStatus } from '../reply';
import { arg, declareScript } from '../script';

/** Records progress and a checkpoint of a held job, renewing its lease (lua/record-progress.lua). */
export const recordProgressScript = declareScript({
  name: 'record-progress',
  encode: (params: ProgressParams) => [
    arg.int(params.now, 'now'),
    arg.id(params.workerId, 'worker id'),
    arg.id(params.jobId, 'job id'),
    arg.id(params.leaseToken, 'lease token'),
    params.progress === undefined ? '' : arg.number(params.progress, 'progress'),
    arg.json(params.data),
    arg.json(params.checkpoint),
  ],
  decode(reply): { applied: boolean; leaseExpiresAt?: number } {
    const { status, rest } = readStatus(reply, 'record-progress');
    return status === 'ok' ? { applied: true, leaseExpiresAt: readInteger(rest[0], 'lease expiry') } : { applied: false };
  },
});
