import type { ExtendLeaseParams } from '../../job-store';
import { readInteger, readStatus, readString } from '../reply';
import { arg, declareScript } from '../script';
import { refusalError } from '../script-errors';

/** Renews the lease of a held job; returns the new expiry (lua/extend-lease.lua). */
export const extendLeaseScript = declareScript({
  name: 'extend-lease',
  encode: (params: ExtendLeaseParams) => [
    arg.int(params.now, 'now'),
    arg.id(params.workerId, 'worker id'),
    arg.id(params.jobId, 'job id'),
    arg.id(params.leaseToken, 'lease token'),
  ],
  decode(reply, params): number {
    const { status, rest } = readStatus(reply, 'extend-lease');
    if (status === 'ok') return readInteger(rest[0], 'lease expiry');
    throw refusalError({ status, jobId: params.jobId, state: rest[0] === undefined ? '' : readString(rest[0], 'job state') });
  },
});
