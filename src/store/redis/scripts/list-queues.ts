import type { Page, PageRequest, QueueCounts } from '../../job-store';
import { readArray, readString } from '../reply';
import { arg, declareScript } from '../script';
import { readQueueSummary } from './replies';

/** One page of the queues that hold jobs or are paused, in name order, with their counts (lua/list-queues.lua). */
export const listQueuesScript = declareScript({
  name: 'list-queues',
  isReadOnly: true,
  encode: (request: PageRequest) => [request.after === undefined ? '' : arg.id(request.after, 'after'), arg.int(request.limit, 'limit')],
  decode(reply): Page<QueueCounts> {
    const [items, nextAfter] = readArray(reply, 'queue page');
    const page: Page<QueueCounts> = { items: readArray(items, 'queues').map(readQueueSummary) };
    const next = readString(nextAfter, 'next after');
    if (next !== '') page.nextAfter = next;
    return page;
  },
});
