import { waitsForWorkflow } from '../../../domain/errors';
import type { StateChange } from '../../job-store';
import { readStatus, readString } from '../reply';
import { arg, declareScript } from '../script';
import { readStateChange } from './replies';

/**
 * Makes a job available afresh (lua/make-available.lua): a pending job
 * (store.activate) or a discarded one (store.retry). A pending job of a
 * workflow waits for its workflow: refused.
 */
export const makeAvailableScript = declareScript({
  name: 'make-available',
  encode: (params: { jobId: string; from: 'pending' | 'discarded'; now: number }) => [
    arg.int(params.now, 'now'),
    arg.id(params.jobId, 'job id'),
    arg.id(params.from, 'expected state'),
  ],
  decode(reply, params): StateChange {
    const { status, rest } = readStatus(reply, 'make available');
    if (status === 'waits_for_workflow') throw waitsForWorkflow(params.jobId, readString(rest[0], 'workflow id'));
    return readStateChange(reply, params.jobId, 'available');
  },
});
