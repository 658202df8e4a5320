import type { Schedule, ScheduleInput } from '../../domain/schedule';
import { Job } from '../../../gen/ojs/server/v1/job';
import type { Schedule as ProtoSchedule } from '../../../gen/ojs/server/v1/schedule_service';
import { toProtoTemplate, toSubmission } from './job-mapper';
import { toDate } from './time-mapping';

/** A registration as sent; the system-managed fields are not read (ojs-cron 2.2: ignored if provided). */
export function toScheduleInput(schedule: ProtoSchedule | undefined): ScheduleInput {
  return {
    name: schedule?.name ?? '',
    expression: schedule?.cron ?? '',
    timezone: schedule?.timezone ?? '',
    // A missing template is an empty one: the domain names its missing type.
    template: toSubmission(schedule?.template ?? Job.fromPartial({}), 'template'),
    overlap: schedule?.overlapPolicy ?? '',
    missedTicks: schedule?.missedTickPolicy ?? '',
    description: schedule?.description ?? '',
    isPaused: schedule?.paused ?? false,
  };
}

export function toProtoSchedule(schedule: Schedule): ProtoSchedule {
  return {
    name: schedule.name,
    cron: schedule.expression,
    timezone: schedule.timezone,
    template: toProtoTemplate(schedule.template),
    overlapPolicy: schedule.overlap,
    missedTickPolicy: schedule.missedTicks,
    description: schedule.description,
    paused: schedule.isPaused,
    createdAt: toDate(schedule.createdAt),
    updatedAt: toDate(schedule.updatedAt),
    nextRunAt: toDate(schedule.nextRunAt),
    lastRunAt: toDate(schedule.lastRunAt),
    runCount: schedule.runCount,
  };
}
