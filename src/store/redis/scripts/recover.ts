import type { JobTransition } from '../../../domain/transition';
import type { RecoverParams } from '../../job-store';
import { appendBatch, arg, declareScript } from '../script';
import { OUTCOME_FIELDS, outcomeFields } from './outcome-items';
import { decodeTransitions } from '../fact-codec';

const RECOVERY_FIELDS = [...OUTCOME_FIELDS, 'requireExpired'] as const;

/** Applies decided outcomes to active jobs still under the lease they were found with (lua/recover.lua). */
export const recoverScript = declareScript({
  name: 'recover',
  encode: (params: RecoverParams) =>
    appendBatch([arg.int(params.now, 'now')], RECOVERY_FIELDS, params.items, (item) => ({
      ...outcomeFields(item),
      requireExpired: arg.flag(item.requireExpired),
    })),
  decode: (reply): JobTransition[] => decodeTransitions(reply),
});
