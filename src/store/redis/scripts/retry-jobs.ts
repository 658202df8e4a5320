import { factText } from '../fact-codec';
import type { BulkChangeParams, BulkOutcome } from '../../job-store';
import { arg, declareScript } from '../script';
import { bulkArgs, readBulkOutcomes } from './bulk-changes';

/** Makes each discarded or retryable job available now, one outcome per id (lua/retry-jobs.lua). */
export const retryJobsScript = declareScript({
  name: 'retry-jobs',
  encode: (params: BulkChangeParams) => bulkArgs([arg.int(params.now, 'now'), arg.text(factText(params.actor ?? ''), 'actor')], params),
  decode: (reply, params): BulkOutcome[] => readBulkOutcomes(reply, params, 'available'),
});
