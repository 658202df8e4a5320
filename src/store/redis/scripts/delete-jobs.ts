import type { BulkChangeParams, BulkOutcome } from '../../job-store';
import { declareScript } from '../script';
import { bulkArgs, readBulkOutcomes } from './bulk-changes';

/** Deletes each finished job and every trace of it, one outcome per id (lua/delete-jobs.lua). */
export const deleteJobsScript = declareScript({
  name: 'delete-jobs',
  encode: (params: BulkChangeParams) => bulkArgs([], params),
  decode: (reply, params): BulkOutcome[] => readBulkOutcomes(reply, params, 'deleted'),
});
