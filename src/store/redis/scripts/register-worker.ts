import type { Worker } from '../../../domain/worker';
import { readStatus } from '../reply';
import { arg, declareScript } from '../script';
import { refusalError } from '../script-errors';
import { newWorkerFields } from '../worker-codec';

/** Registers a worker unless its id is taken (lua/register-worker.lua). */
export const registerWorkerScript = declareScript({
  name: 'register-worker',
  encode(worker: Worker) {
    const fields = newWorkerFields(worker);
    return [
      arg.id(worker.workerId, 'worker id'),
      arg.id(fields.registration, 'registration'),
      arg.int(fields.concurrency, 'concurrency'),
      arg.int(fields.registeredAt, 'registeredAt'),
      arg.id(fields.state, 'state'),
      arg.text(fields.directive ?? '', 'directive'),
      arg.id(fields.desired, 'desired state'),
      arg.int(fields.lastBeatAt, 'lastBeatAt'),
      arg.int(fields.lastSequence, 'lastSequence'),
      arg.id(fields.reportedJobIds, 'reportedJobIds'),
      JSON.stringify(worker.queues),
      arg.text(fields.owner, 'owner'),
    ];
  },
  decode(reply, worker): void {
    const { status } = readStatus(reply, 'register-worker');
    if (status !== 'ok') throw refusalError({ status, workerId: worker.workerId });
  },
});
