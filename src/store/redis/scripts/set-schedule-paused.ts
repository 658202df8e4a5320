import { scheduleNotFound } from '../../../domain/errors';
import type { Schedule } from '../../../domain/schedule';
import type { SchedulePauseParams } from '../../job-store';
import { readInteger, readStatus, unexpectedReply } from '../reply';
import { readSchedule } from '../schedule-codec';
import { arg, declareScript } from '../script';

/** Pauses or resumes a schedule (lua/set-schedule-paused.lua). */
export const setSchedulePausedScript = declareScript({
  name: 'set-schedule-paused',
  encode: (params: SchedulePauseParams) => [
    arg.int(params.now, 'now'),
    arg.id(params.name, 'schedule name'),
    arg.flag(params.paused),
    arg.optionalInt(params.paused ? undefined : params.nextRunAt, 'next run'),
  ],
  decode(reply, params): { schedule: Schedule; changed: boolean } {
    const { status, rest } = readStatus(reply, 'set schedule paused');
    if (status === 'not_found') throw scheduleNotFound(params.name);
    if (status !== 'ok') return unexpectedReply('set schedule paused', reply);
    const [changed, hash] = rest;
    return { schedule: readSchedule(hash), changed: readInteger(changed, 'schedule pause changed') === 1 };
  },
});
