import type { Duration } from '../gen/google/protobuf/duration';
import type { JobEvent, QueueInfo, QueueLimits, WorkerInfo } from '../gen/ojs/server/v1/operator_service';
import { WorkerState } from '../gen/ojs/server/v1/worker_service';
import { enumName } from './enum-names';
import type { Output } from './output';
import { relativeTime, shortDuration } from './relative-time';
import { toWire } from './wire';

export const WORKER_STATE_PREFIX = 'WORKER_STATE_';

function durationMs(duration: Duration | undefined): number | undefined {
  return duration === undefined ? undefined : duration.seconds * 1000 + Math.round(duration.nanos / 1e6);
}

/** A queue as `--json` prints it; lag and rate period in milliseconds. */
export function queueJson(queue: QueueInfo): unknown {
  const { lag, limits, ...rest } = queue;
  const rate = limits?.rate === undefined ? undefined : { limit: limits.rate.limit, periodMs: durationMs(limits.rate.period) };
  return toWire({ ...rest, lagMs: durationMs(lag), limits: limits === undefined ? undefined : { maxActive: limits.maxActive, rate } });
}

/** A queue's limits as the table shows them: "20/500ms, 5 active"; "-" for none. */
export function queueLimitsText(limits: QueueLimits | undefined): string {
  const parts: string[] = [];
  if (limits?.rate !== undefined) parts.push(`${limits.rate.limit}/${exactDuration(durationMs(limits.rate.period) ?? 0)}`);
  if (limits?.maxActive !== undefined) parts.push(`${limits.maxActive} active`);
  return parts.length === 0 ? '-' : parts.join(', ');
}

/** Milliseconds in the largest unit that writes them exactly: "500ms", "2s", "90s", "1h". */
function exactDuration(ms: number): string {
  const unit = EXACT_UNITS.find(([, unitMs]) => ms >= unitMs && ms % unitMs === 0);
  return unit === undefined ? `${ms}ms` : `${ms / unit[1]}${unit[0]}`;
}

const EXACT_UNITS: [suffix: string, ms: number][] = [
  ['d', 86_400_000],
  ['h', 3_600_000],
  ['m', 60_000],
  ['s', 1_000],
];

export function printQueueTable(output: Output, queues: QueueInfo[]): void {
  output.table(
    ['QUEUE', 'STATUS', 'AVAILABLE', 'ACTIVE', 'SCHEDULED', 'PENDING', 'RETRYABLE', 'COMPLETED', 'CANCELLED', 'DISCARDED', 'LAG', 'LIMITS'],
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
        queueLimitsText(queue.limits),
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
