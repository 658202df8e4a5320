import { desiredState, NEXT_WORKER_STATES, type Worker, type WorkerRegistration } from '../../domain/worker';
import { readJson, readJsonArray, readJsonObject, readKeyOf, readNumber, readOptionalNumberText, readString } from './reply';

/**
 * A new worker's hash fields, as register-worker.lua takes them: the
 * registration as JSON, and the scalar fields scripts compare and set.
 * `desired` is stored (computed by the domain) so that the claim script
 * never re-implements the desired-state rule.
 */
export function newWorkerFields(worker: Worker) {
  const registration: WorkerRegistration = {
    workerId: worker.workerId,
    hostname: worker.hostname,
    pid: worker.pid,
    queues: worker.queues,
    concurrency: worker.concurrency,
    labels: worker.labels,
  };
  if (worker.startedAt !== undefined) registration.startedAt = worker.startedAt;
  return {
    registration: JSON.stringify(registration),
    owner: worker.owner,
    concurrency: worker.concurrency,
    registeredAt: worker.registeredAt,
    state: worker.state,
    directive: worker.directive,
    desired: desiredState(worker),
    lastBeatAt: worker.lastBeatAt,
    lastSequence: worker.lastSequence,
    reportedJobIds: JSON.stringify(worker.reportedJobIds),
  };
}

function readRegistration(text: string): WorkerRegistration {
  const fields = readJsonObject(readJson(text, 'worker registration'), 'worker registration');
  const strings = (name: string): string[] =>
    readJsonArray(fields[name], `worker ${name}`).map((item, i) => readString(item, `worker ${name}[${i}]`));
  const registration: WorkerRegistration = {
    workerId: readString(fields['workerId'], 'worker id'),
    hostname: readString(fields['hostname'], 'worker hostname'),
    pid: readNumber(fields['pid'], 'worker pid'),
    queues: strings('queues'),
    concurrency: readNumber(fields['concurrency'], 'worker concurrency'),
    labels: strings('labels'),
  };
  if (fields['startedAt'] !== undefined) registration.startedAt = readNumber(fields['startedAt'], 'worker startedAt');
  return registration;
}

/** A worker from its hash (as read by readFlatHash). */
export function decodeWorker(fields: Readonly<Record<string, string>>): Worker {
  const number = (name: string): number => readOptionalNumberText(fields[name], `worker field ${name}`) ?? 0;
  const reported = readJsonArray(readJson(fields['reportedJobIds'] ?? '[]', 'worker reportedJobIds'), 'worker reportedJobIds');
  const worker: Worker = {
    ...readRegistration(readString(fields['registration'], 'worker registration')),
    // Workers registered before owners were recorded belong to ANONYMOUS, as they were registered without authentication.
    owner: fields['owner'] ?? '',
    registeredAt: number('registeredAt'),
    state: readKeyOf(fields['state'], NEXT_WORKER_STATES, 'worker state'),
    lastBeatAt: number('lastBeatAt'),
    lastSequence: number('lastSequence'),
    reportedJobIds: reported.map((id, i) => readString(id, `worker reportedJobIds[${i}]`)),
  };
  if (fields['directive'] !== undefined) worker.directive = readKeyOf(fields['directive'], NEXT_WORKER_STATES, 'worker directive');
  return worker;
}
