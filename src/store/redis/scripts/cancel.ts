import type { StateChange } from '../../job-store';
import { arg, declareScript } from '../script';
import { readStateChange } from './replies';

/** Cancels a job that has not finished (lua/cancel.lua). */
export const cancelScript = declareScript({
  name: 'cancel',
  encode: (params: { jobId: string; now: number }) => [arg.int(params.now, 'now'), arg.id(params.jobId, 'job id')],
  decode: (reply, params): StateChange => readStateChange(reply, params.jobId, 'cancelled'),
});
