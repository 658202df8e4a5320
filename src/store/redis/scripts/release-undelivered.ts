import type { ReleaseParams } from '../../job-store';
import { appendBatch, arg, declareScript } from '../script';
import { decodeTransitions } from '../fact-codec';

const LEASE_FIELDS = ['jobId', 'leaseToken'] as const;

/** Undoes the claim of jobs that never reached their worker (lua/release-undelivered.lua). */
export const releaseUndeliveredScript = declareScript({
  name: 'release-undelivered',
  encode: (params: ReleaseParams) =>
    appendBatch([arg.int(params.now, 'now'), arg.flag(params.requireUnconfirmedLapse)], LEASE_FIELDS, params.leases, (lease) => ({
      jobId: arg.id(lease.jobId, 'job id'),
      leaseToken: arg.id(lease.leaseToken, 'lease token'),
    })),
  decode: (reply) => decodeTransitions(reply),
});
