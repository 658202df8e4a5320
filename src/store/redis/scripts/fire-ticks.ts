import { uniqueConflict } from '../../../domain/errors';
import type { FireTicksOutcome, FireTicksParams } from '../../job-store';
import { readArray, readStatus, readString } from '../reply';
import { readSchedule } from '../schedule-codec';
import { arg, declareScript } from '../script';
import { refusalError } from '../script-errors';
import { appendNewJobs, readNewJobOutcome } from './new-jobs';

/** Applies a tick plan to a schedule still as it was read (lua/fire-ticks.lua). */
export const fireTicksScript = declareScript({
  name: 'fire-ticks',
  encode: (params: FireTicksParams, settings) =>
    appendNewJobs(
      [
        arg.int(params.now, 'now'),
        arg.id(params.name, 'schedule name'),
        arg.int(params.revision, 'revision'),
        arg.int(params.expectedNextRunAt, 'expected next run'),
        arg.optionalInt(params.nextRunAt, 'next run'),
        arg.optionalInt(params.tick?.at, 'tick'),
        arg.optionalInt(params.missed?.first, 'first missed tick'),
        arg.optionalInt(params.missed?.count, 'missed count'),
        arg.optionalInt(params.missed?.last, 'last missed tick'),
        params.missed === undefined ? '' : arg.flag(params.missed.isCountAtLeast),
        arg.optionalInt(params.invalidTick, 'invalid tick'),
      ],
      params.tick === undefined ? [] : [params.tick.job],
      params.now,
      settings,
    ),
  decode(reply, params): FireTicksOutcome {
    const { status, rest } = readStatus(reply, 'fire ticks');
    if (status === 'stale') return { fired: false };
    if (status === 'unique') {
      const [, holderId, holderState, key] = rest;
      throw uniqueConflict(
        'tick.unique',
        readString(holderId, 'unique holder id'),
        readString(holderState, 'unique holder state'),
        readString(key, 'unique key'),
      );
    }
    if (status !== 'ok') throw refusalError({ status, jobId: readString(rest[0], 'duplicate job id') });
    const [hash, outcomes] = rest;
    const schedule = readSchedule(hash);
    const [outcome] = readArray(outcomes, 'tick outcomes');
    if (params.tick === undefined || outcome === undefined) return { fired: true, schedule };
    return { fired: true, schedule, enqueued: readNewJobOutcome(outcome, params.tick.job) };
  },
});
