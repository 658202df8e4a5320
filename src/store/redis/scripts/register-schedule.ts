import { MAX_SCHEDULES, tooManySchedules, type Schedule } from '../../../domain/schedule';
import type { RegisterScheduleParams } from '../../job-store';
import { factText } from '../fact-codec';
import { readArray, readInteger } from '../reply';
import { encodeScheduleSpec, readSchedule } from '../schedule-codec';
import { arg, declareScript } from '../script';

/** Stores or updates a schedule (lua/register-schedule.lua). */
export const registerScheduleScript = declareScript({
  name: 'register-schedule',
  encode: (params: RegisterScheduleParams) => [
    arg.int(params.now, 'now'),
    arg.id(params.spec.name, 'schedule name'),
    encodeScheduleSpec(params.spec),
    arg.flag(params.spec.isPaused),
    arg.optionalInt(params.nextRunAt, 'next run'),
    arg.id(factText(params.spec.expression), 'expression'),
    arg.id(factText(params.spec.timezone), 'timezone'),
    arg.int(params.maxSchedules ?? MAX_SCHEDULES, 'max schedules'),
    arg.int(params.anchoredAt ?? params.now, 'anchored at'),
  ],
  decode(reply, params): { schedule: Schedule; created: boolean } {
    const [created, hash] = readArray(reply, 'register schedule');
    if (created === 'full') throw tooManySchedules(params.maxSchedules ?? MAX_SCHEDULES);
    return { schedule: readSchedule(hash), created: readInteger(created, 'schedule created') === 1 };
  },
});
