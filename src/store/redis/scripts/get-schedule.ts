import type { Schedule } from '../../../domain/schedule';
import { decodeSchedule } from '../schedule-codec';
import { arg, declareScript } from '../script';

/** One schedule, if there is one (lua/get-schedule.lua). */
export const getScheduleScript = declareScript({
  name: 'get-schedule',
  isReadOnly: true,
  encode: (name: string) => [arg.id(name, 'schedule name')],
  decode: (reply): Schedule | undefined => decodeSchedule(reply),
});
