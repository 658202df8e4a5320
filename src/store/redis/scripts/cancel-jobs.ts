import { factText } from '../fact-codec';
import type { BulkChangeParams, BulkOutcome } from '../../job-store';
import { arg, declareScript } from '../script';
import { bulkArgs, readBulkOutcomes } from './bulk-changes';

/** Cancels each job that has not finished, one outcome per id (lua/cancel-jobs.lua). */
export const cancelJobsScript = declareScript({
  name: 'cancel-jobs',
  encode: (params: BulkChangeParams) =>
    bulkArgs(
      [arg.int(params.now, 'now'), arg.text(factText(params.actor ?? ''), 'actor'), arg.text(factText(params.reason ?? ''), 'reason')],
      params,
    ),
  decode: (reply, params): BulkOutcome[] => readBulkOutcomes(reply, params, 'cancelled'),
});
