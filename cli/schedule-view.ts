import type { Job } from '../gen/ojs/server/v1/job';
import type { Schedule } from '../gen/ojs/server/v1/schedule_service';
import { jobJson } from './job-view';
import type { Output } from './output';
import { exactAndRelativeTime, relativeTime } from './relative-time';
import { toWire } from './wire';

/** A value proto3 JSON leaves out of a message: a field at its zero. */
const isZero = (value: unknown): boolean => value === '' || value === 0 || value === false || (Array.isArray(value) && value.length === 0);

/**
 * A schedule's job template as `--json` prints it: the envelope's fields at
 * their zero left out (as proto3 JSON writes a message), since a template
 * leaves the system-managed ones (id, state, attempt...) unset. Nested
 * messages (retry, unique) stay as the server answered them.
 */
function templateJson(template: Job): Record<string, unknown> {
  const wire = jobJson(template);
  if (wire === null || typeof wire !== 'object') return {};
  return Object.fromEntries(Object.entries(wire).filter(([name, value]) => name !== 'state' && !isZero(value)));
}

/** A schedule as `--json` prints it: the contract's snake_case names, times in RFC 3339, the template as set. */
export function scheduleJson(schedule: Schedule): unknown {
  return toWire({ ...schedule, template: schedule.template === undefined ? undefined : templateJson(schedule.template) });
}

/** The queue a schedule's jobs go to; the contract's empty queue is "default". */
const queueOf = (schedule: Schedule): string => (schedule.template?.queue ?? '') || 'default';

const pausedText = (output: Output, schedule: Schedule): string => (schedule.paused ? output.paint('yellow', 'yes') : 'no');

/** Schedules as one aligned table, in name order as listed. */
export function printScheduleTable(output: Output, schedules: Schedule[], nowMs: number): void {
  output.table(
    ['NAME', 'CRON', 'TIMEZONE', 'QUEUE', 'TYPE', 'OVERLAP', 'PAUSED', 'NEXT RUN', 'LAST RUN', 'RUNS'],
    schedules.map((schedule) => [
      schedule.name,
      schedule.cron,
      schedule.timezone,
      queueOf(schedule),
      schedule.template?.type ?? '',
      schedule.overlapPolicy,
      pausedText(output, schedule),
      relativeTime(schedule.nextRunAt, nowMs),
      relativeTime(schedule.lastRunAt, nowMs),
      String(schedule.runCount),
    ]),
  );
}

/** One schedule, field by field, for `schedules get` and the commands that change one. */
export function printSchedule(output: Output, schedule: Schedule, nowMs: number): void {
  const when = (at: Date | undefined): string => exactAndRelativeTime(at, nowMs);
  // The template's fields beyond the type, queue and arguments shown on lines of their own (priority, retry...).
  const { type: _type, queue: _queue, args: _args, ...options } = schedule.template === undefined ? {} : templateJson(schedule.template);
  const fields: [string, string][] = [
    ['name', schedule.name],
    ['cron', schedule.cron],
    ['timezone', schedule.timezone],
    ['paused', pausedText(output, schedule)],
    ['overlap', schedule.overlapPolicy],
    ['missed ticks', schedule.missedTickPolicy],
    ['next run', when(schedule.nextRunAt)],
    ['last run', when(schedule.lastRunAt)],
    ['runs', String(schedule.runCount)],
    ['type', schedule.template?.type ?? ''],
    ['queue', queueOf(schedule)],
    ['args', JSON.stringify(schedule.template?.args ?? [])],
  ];
  if (Object.keys(options).length > 0) fields.push(['job options', JSON.stringify(options)]);
  if (schedule.description !== '') fields.push(['description', schedule.description]);
  fields.push(['created', when(schedule.createdAt)], ['updated', when(schedule.updatedAt)]);
  output.fields(fields);
}
