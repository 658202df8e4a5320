import type { JobState } from '../../../domain/job';
import type { Page, PageRequest, QueueCounts } from '../../job-store';
import { readArray, readFlatHash, readInteger, readString } from '../reply';
import { arg, declareScript } from '../script';

function readQueueCounts(value: unknown): QueueCounts {
  const [name, hash] = readArray(value, 'queue counts');
  const counts = readFlatHash(hash, 'queue counts hash');
  const queue = readString(name, 'queue name');
  const count = (state: JobState): number => readInteger(counts[state] ?? '0', `queue ${queue} ${state} count`);
  return {
    queue,
    scheduled: count('scheduled'),
    available: count('available'),
    pending: count('pending'),
    active: count('active'),
    completed: count('completed'),
    retryable: count('retryable'),
    cancelled: count('cancelled'),
    discarded: count('discarded'),
  };
}

/** One page of the queues that hold jobs, in name order, with their counts (lua/list-queues.lua). */
export const listQueuesScript = declareScript({
  name: 'list-queues',
  encode: (request: PageRequest) => [request.after === undefined ? '' : arg.id(request.after, 'after'), arg.int(request.limit, 'limit')],
  decode(reply): Page<QueueCounts> {
    const [items, nextAfter] = readArray(reply, 'queue page');
    const page: Page<QueueCounts> = { items: readArray(items, 'queues').map(readQueueCounts) };
    const next = readString(nextAfter, 'next after');
    if (next !== '') page.nextAfter = next;
    return page;
  },
});
