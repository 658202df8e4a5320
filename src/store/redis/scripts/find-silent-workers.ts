import type { WorkerSnapshot } from '../../job-store';
import { readArray } from '../reply';
import { arg, declareScript } from '../script';
import { readWorkerSnapshot } from './replies';

/** Workers whose last beat is older than a cutoff, with the jobs they hold (lua/find-silent-workers.lua). */
export const findSilentWorkersScript = declareScript({
  name: 'find-silent-workers',
  isReadOnly: true,
  encode: (params: { cutoff: number; limit: number }) => [arg.int(params.cutoff, 'cutoff'), arg.int(params.limit, 'limit')],
  decode: (reply): WorkerSnapshot[] => readArray(reply, 'silent workers').map(readWorkerSnapshot),
});
