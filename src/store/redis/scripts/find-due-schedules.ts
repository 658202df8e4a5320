import type { Schedule } from '../../../domain/schedule';
import { readArray } from '../reply';
import { readSchedule } from '../schedule-codec';
import { arg, declareScript } from '../script';

/** The schedules due at `now`, earliest first (lua/find-due-schedules.lua). */
export const findDueSchedulesScript = declareScript({
  name: 'find-due-schedules',
  isReadOnly: true,
  encode: (params: { now: number; limit: number }) => [arg.int(params.now, 'now'), arg.int(params.limit, 'limit')],
  decode: (reply): Schedule[] => readArray(reply, 'due schedules').map(readSchedule),
});
