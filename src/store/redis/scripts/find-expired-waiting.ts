import type { Job } from '../../../domain/job';
import { declareScript } from '../script';
import { readJobs } from './replies';
import { timedPassArgs, type TimedPass } from './timed-pass';

/** Waiting jobs past their waiting deadline (lua/find-expired-waiting.lua). */
export const findExpiredWaitingScript = declareScript({
  name: 'find-expired-waiting',
  encode: (params: TimedPass) => timedPassArgs(params),
  decode: (reply): Job[] => readJobs(reply),
});
