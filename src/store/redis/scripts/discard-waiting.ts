import type { JobTransition } from '../../../domain/transition';
import { summarizeError } from '../../../domain/event-facts';
import type { DiscardWaitingParams } from '../../job-store';
import { appendBatch, arg, declareScript } from '../script';
import { decodeTransitions } from '../fact-codec';

const DISCARD_FIELDS = ['jobId', 'expectedState', 'error', 'errors', 'errorType', 'summary'] as const;

/** Discards waiting jobs as decided, each only in the state it was found in (lua/discard-waiting.lua). */
export const discardWaitingScript = declareScript({
  name: 'discard-waiting',
  encode: (params: DiscardWaitingParams) =>
    appendBatch([arg.int(params.now, 'now')], DISCARD_FIELDS, params.items, (item) => ({
      jobId: arg.id(item.jobId, 'job id'),
      expectedState: arg.id(item.expectedState, 'expected state'),
      error: arg.json(item.error),
      errors: arg.json(item.errors),
      errorType: arg.id(item.error.type, 'error type'),
      summary: arg.json(summarizeError(item.error)),
    })),
  decode: (reply): JobTransition[] => decodeTransitions(reply),
});
