import { scheduleNotFound } from '../../../domain/errors';
import { readInteger } from '../reply';
import { arg, declareScript } from '../script';

/** Removes a schedule; not_found when there is none (lua/remove-schedule.lua). */
export const removeScheduleScript = declareScript({
  name: 'remove-schedule',
  encode: (name: string) => [arg.id(name, 'schedule name')],
  decode(reply, name): void {
    if (readInteger(reply, 'schedule removed') !== 1) throw scheduleNotFound(name);
  },
});
