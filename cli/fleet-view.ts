import type { Duration } from '../gen/google/protobuf/duration';
import type { JobEvent, QueueInfo, WorkerInfo } from '../gen/ojs/server/v1/operator_service';
import { WorkerState } from '../gen/ojs/server/v1/worker_service';
import { enumName } from './enum-names';
import type { Output } from './output';
import { relativeTime, shortDuration } from './relative-time';
import { toWire } from './wire';

export const WORKER_STATE_PREFIX = 'WORKER_STATE_';

function durationMs(duration: Duration | undefined): number | undefined {
  return duration === undefined ? undefined : duration.seconds * 1000 + Math.round(duration.nanos / 1e6);
}

/** A queue as `--json` prints it; lag in milliseconds. */
export function queueJson(queue: QueueInfo): unknown {
  const { lag, ...rest } = queue;
  return toWire({ ...rest, lagMs: durationMs(lag) });
}

export function printQueueTable(output: Output, queues: QueueInfo[]): void {
  output.table(
    ['QUEUE', 'STATUS', 'AVAILABLE', 'ACTIVE', 'SCHEDULED', 'PENDING', 'RETRYABLE', 'COMPLETED', 'CANCELLED', 'DISCARDED', 'LAG'],
    queues.map((queue) => {
      const lagMs = durationMs(queue.lag);
      return [
        queue.name,
        queue.paused ? output.paint('yellow', 'paused') : 'running',
        ...[
          queue.available,
          queue.active,
          queue.scheduled,
          queue.pending,
          queue.retryable,
          queue.completed,
          queue.cancelled,
          queue.discarded,
        ].map(String),
        lagMs === undefined ? '-' : shortDuration(lagMs),
      ];
    }),
  );
}

export function workerStateName(state: WorkerState): string {
  return enumName(WorkerState, WORKER_STATE_PREFIX, state);
}

/** A worker as `--json` prints it, states by name. */
export function workerJson(worker: WorkerInfo): unknown {
  return toWire({ ...worker, state: workerStateName(worker.state), desiredState: workerStateName(worker.desiredState) });
}

export function printWorkerTable(output: Output, workers: WorkerInfo[], nowMs: number): void {
  output.table(
    ['WORKER', 'STATE', 'DESIRED', 'QUEUES', 'LABELS', 'HOST', 'PID', 'ACTIVE', 'LAST BEAT'],
    workers.map((worker) => [
      worker.workerId,
      workerStateName(worker.state),
      worker.desiredState === worker.state ? '' : output.paint('yellow', workerStateName(worker.desiredState)),
      worker.queues.join(','),
      worker.labels.join(','),
      worker.hostname,
      String(worker.pid),
      `${worker.activeJobs}/${worker.concurrency}`,
      relativeTime(worker.lastBeatAt, nowMs),
    ]),
  );
}

/** An event as `--json` prints it: the CloudEvents-like OJS event, its data untouched. */
export function eventJson(event: JobEvent): unknown {
  return toWire(event);
}

/** Column widths of a streamed event line: a stream cannot measure its rows in advance. */
const EVENT_COLUMN_WIDTHS = [26, 22, 16, 20, 38, 38];

/** One event on one line, aligned with the lines before it. */
export function printEvent(output: Output, event: JobEvent): void {
  output.row(
    [
      event.time?.toISOString() ?? '-',
      output.paint('cyan', event.type),
      event.queue,
      event.jobType,
      event.subject,
      output.paint('dim', event.id),
    ],
    EVENT_COLUMN_WIDTHS,
  );
}
