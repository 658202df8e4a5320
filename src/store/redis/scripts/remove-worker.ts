import type { RemoveWorkerOutcome, RemoveWorkerParams } from '../../job-store';
import { readArray, readInteger } from '../reply';
import { appendBatch, arg, declareScript } from '../script';
import { OUTCOME_FIELDS, outcomeFields } from './outcome-items';
import { decodeTransitions } from '../fact-codec';

/** Removes a worker, applying outcomes to the jobs it holds, atomically (lua/remove-worker.lua). */
export const removeWorkerScript = declareScript({
  name: 'remove-worker',
  encode: (params: RemoveWorkerParams) =>
    appendBatch(
      [
        arg.int(params.now, 'now'),
        arg.id(params.workerId, 'worker id'),
        arg.optionalInt(params.ifLastBeatAt, 'ifLastBeatAt'),
        arg.id(params.reason, 'reason'),
      ],
      OUTCOME_FIELDS,
      params.recoveries,
      outcomeFields,
    ),
  decode(reply): RemoveWorkerOutcome {
    const [removed, transitions] = readArray(reply, 'remove-worker');
    return { removed: readInteger(removed, 'removed') === 1, transitions: decodeTransitions(transitions) };
  },
});
