import type { Page, WorkerPageRequest, WorkerSnapshot } from '../../job-store';
import { readArray, readString } from '../reply';
import { arg, declareScript } from '../script';
import { readWorkerSnapshot } from './replies';

/** One page of workers in id order, optionally filtered, within a scan budget (lua/list-workers.lua). */
export const listWorkersScript = declareScript({
  name: 'list-workers',
  isReadOnly: true,
  encode: (request: WorkerPageRequest) => [
    request.after === undefined ? '' : arg.id(request.after, 'after'),
    arg.int(request.limit, 'limit'),
    arg.int(request.scanBudget, 'scanBudget'),
    arg.flag(request.filter?.label !== undefined),
    arg.text(request.filter?.label ?? '', 'label'),
    arg.flag(request.filter?.queue !== undefined),
    arg.text(request.filter?.queue ?? '', 'queue'),
  ],
  decode(reply): Page<WorkerSnapshot> {
    const [items, nextAfter] = readArray(reply, 'worker page');
    const page: Page<WorkerSnapshot> = { items: readArray(items, 'workers').map(readWorkerSnapshot) };
    const next = readString(nextAfter, 'next after');
    if (next !== '') page.nextAfter = next;
    return page;
  },
});
