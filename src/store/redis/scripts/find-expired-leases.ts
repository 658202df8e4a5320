import type { Job } from '../../../domain/job';
import { declareScript } from '../script';
import { readJobs } from './replies';
import { timedPassArgs, type TimedPass } from './timed-pass';

/** Active jobs whose lease expired (lua/find-expired-leases.lua). */
export const findExpiredLeasesScript = declareScript({
  name: 'find-expired-leases',
  isReadOnly: true,
  encode: (params: TimedPass) => timedPassArgs(params),
  decode: (reply): Job[] => readJobs(reply),
});
