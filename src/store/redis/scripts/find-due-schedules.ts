import type { DueSchedules } from '../../job-store';
import { readArray, readOptionalInteger } from '../reply';
import { readSchedule } from '../schedule-codec';
import { arg, declareScript } from '../script';

/** The schedules due at `now`, earliest first, and when the next pass is due (lua/find-due-schedules.lua). */
export const findDueSchedulesScript = declareScript({
  name: 'find-due-schedules',
  isReadOnly: true,
  encode: (params: { now: number; limit: number }) => [arg.int(params.now, 'now'), arg.int(params.limit, 'limit')],
  decode(reply): DueSchedules {
    const [schedules, nextDueAt] = readArray(reply, 'due schedules');
    return {
      schedules: readArray(schedules, 'due schedules').map(readSchedule),
      nextDueAt: readOptionalInteger(nextDueAt, 'next schedule pass'),
    };
  },
});
