import type { Schedule } from '../../../domain/schedule';
import type { Page, PageRequest } from '../../job-store';
import { readArray, readString } from '../reply';
import { readSchedule } from '../schedule-codec';
import { arg, declareScript } from '../script';

/** One page of the schedules, in name order (lua/list-schedules.lua). */
export const listSchedulesScript = declareScript({
  name: 'list-schedules',
  isReadOnly: true,
  encode: (request: PageRequest) => [request.after === undefined ? '' : arg.id(request.after, 'after'), arg.int(request.limit, 'limit')],
  decode(reply): Page<Schedule> {
    const [items, nextAfter] = readArray(reply, 'schedule page');
    const page: Page<Schedule> = { items: readArray(items, 'schedules').map(readSchedule) };
    const next = readString(nextAfter, 'next after');
    if (next !== '') page.nextAfter = next;
    return page;
  },
});
