import type { StateChange } from '../../job-store';
import { arg, declareScript } from '../script';
import { readStateChange } from './replies';

/**
 * Makes a job available afresh (lua/make-available.lua): a pending job
 * (store.activate) or a discarded one (store.retry).
 */
export const makeAvailableScript = declareScript({
  name: 'make-available',
  encode: (params: { jobId: string; from: 'pending' | 'discarded'; now: number }) => [
    arg.int(params.now, 'now'),
    arg.id(params.jobId, 'job id'),
    arg.id(params.from, 'expected state'),
  ],
  decode: (reply, params): StateChange => readStateChange(reply, params.jobId, 'available'),
});
