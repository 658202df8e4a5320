import { readArray, readString } from '../reply';
import { declareScript } from '../script';
import { timedPassArgs, type TimedPass } from './timed-pass';

/** Takes, once, the active jobs whose execution timeout passed (lua/take-soft-timeouts.lua). */
export const takeSoftTimeoutsScript = declareScript({
  name: 'take-soft-timeouts',
  encode: (params: TimedPass) => timedPassArgs(params),
  decode: (reply): { jobId: string; workerId: string }[] =>
    readArray(reply, 'soft timeouts').map((entry) => {
      const [jobId, workerId] = readArray(entry, 'soft timeout');
      return { jobId: readString(jobId, 'job id'), workerId: readString(workerId, 'worker id') };
    }),
});
