import type { WorkerSnapshot } from '../../job-store';
import { readArray } from '../reply';
import { arg, declareScript } from '../script';
import { readWorkerSnapshot } from './replies';

/** One worker with the jobs it holds (lua/get-worker.lua). */
export const getWorkerScript = declareScript({
  name: 'get-worker',
  isReadOnly: true,
  encode: (params: { workerId: string }) => [arg.id(params.workerId, 'worker id')],
  decode: (reply): WorkerSnapshot | undefined => (readArray(reply, 'worker').length === 0 ? undefined : readWorkerSnapshot(reply)),
});
