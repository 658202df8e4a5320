import type { Application } from '../../app/application';
import { invalidRequest } from '../../domain/errors';
import type { WorkerTarget, WorkerSnapshot } from '../../store/job-store';
import type {
  ListWorkersRequest,
  OperatorServiceImplementation,
  SetWorkerStateRequest,
  WorkerInfo,
} from '../../../gen/ojs/server/v1/operator_service';
import { desiredState } from '../../domain/worker';
import { fromProtoWorkerState, toProtoWorkerState } from './enum-mapping';
import { toDate } from './time-mapping';

/** OperatorService handlers: the fleet and the queues. */
export class OperatorServiceHandlers implements OperatorServiceImplementation {
  constructor(private readonly app: Application) {}

  async listWorkers(request: ListWorkersRequest) {
    const filter: { label?: string; queue?: string } = {};
    if (request.label !== '') filter.label = request.label;
    if (request.queue !== '') filter.queue = request.queue;
    const snapshots = await this.app.workers.list(filter);
    return { workers: snapshots.map(toWorkerInfo) };
  }

  async setWorkerState(request: SetWorkerStateRequest) {
    const state = fromProtoWorkerState(request.state);
    if (state === undefined) throw invalidRequest('state', 'must be RUNNING, QUIET or TERMINATE');
    const target = toTarget(request.target);
    return { workerIds: await this.app.workers.direct(target, state) };
  }

  async listQueues() {
    const queues = await this.app.jobs.queueCounts();
    return { queues: queues.map(({ queue, ...counts }) => ({ name: queue, ...counts })) };
  }
}

function toTarget(target: SetWorkerStateRequest['target']): WorkerTarget {
  const value = target?.value ?? '';
  if (target === undefined || value === '') throw invalidRequest('target', 'set one of worker_id, label or queue');
  switch (target.$case) {
    case 'workerId':
      return { workerId: value };
    case 'label':
      return { label: value };
    case 'queue':
      return { queue: value };
  }
}

function toWorkerInfo({ worker, heldJobIds }: WorkerSnapshot): WorkerInfo {
  return {
    workerId: worker.workerId,
    hostname: worker.hostname,
    pid: worker.pid,
    queues: worker.queues,
    concurrency: worker.concurrency,
    labels: worker.labels,
    startedAt: toDate(worker.startedAt),
    registeredAt: toDate(worker.registeredAt),
    state: toProtoWorkerState(worker.state),
    desiredState: toProtoWorkerState(desiredState(worker)),
    lastBeatAt: toDate(worker.lastBeatAt),
    activeJobs: heldJobIds.length,
    activeJobIds: heldJobIds,
  };
}
