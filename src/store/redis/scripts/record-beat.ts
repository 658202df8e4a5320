import { NEXT_WORKER_STATES } from '../../../domain/worker';
import type { BeatOutcome, BeatParams } from '../../job-store';
import { readKeyOf, readOneOf, readStatus, readStrings } from '../reply';
import { appendBatch, arg, declareScript } from '../script';
import { refusalError } from '../script-errors';
import { stateChangeArgs } from './state-change';

const BEAT_RESULTS = ['applied', 'stale', 'conflict'] as const satisfies readonly BeatOutcome['result'][];

/** Records a worker's beat and the state the domain decided for it (lua/record-beat.lua). */
export const recordBeatScript = declareScript({
  name: 'record-beat',
  encode: (params: BeatParams) =>
    appendBatch(
      [
        arg.int(params.now, 'now'),
        arg.id(params.workerId, 'worker id'),
        arg.int(params.sequence, 'sequence'),
        ...stateChangeArgs(params),
        JSON.stringify(params.activeJobIds),
      ],
      ['jobId'],
      params.activeJobIds,
      (jobId) => ({ jobId: arg.id(jobId, 'active job id') }),
    ),
  decode(reply, params): BeatOutcome {
    const { status, rest } = readStatus(reply, 'record-beat');
    if (status === 'not_found') throw refusalError({ status, workerId: params.workerId });
    const [desired, cancelled, timedOut, reclaimed] = rest;
    const result = readOneOf(status, BEAT_RESULTS, 'beat result');
    const isApplied = result === 'applied';
    return {
      result,
      desiredState: readKeyOf(desired, NEXT_WORKER_STATES, 'desired state'),
      cancelledJobIds: isApplied ? readStrings(cancelled, 'cancelled job ids') : [],
      timedOutJobIds: isApplied ? readStrings(timedOut, 'timed-out job ids') : [],
      reclaimedJobIds: isApplied ? readStrings(reclaimed, 'reclaimed job ids') : [],
    };
  },
});
