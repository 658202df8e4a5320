import type { Job as WireJob } from '../gen/ojs/server/v1/job';
import type { Schedule as WireSchedule } from '../gen/ojs/server/v1/schedule_service';
import { ON_EXHAUSTION_VALUES } from './job';
import { wireSpec, type JobSpec } from './job-spec';

/** What a tick does while the schedule's previous job has not finished (ojs-cron 6). */
export type OverlapPolicy = 'skip' | 'allow' | 'cancel_previous';
/** What happens to ticks no server fired in time (all replicas down). */
export type MissedTickPolicy = 'run_once' | 'skip';

/** A cron schedule as a producer registers it (ojs-cron 2). */
export interface ScheduleSpec {
  /** Unique: lowercase letters, digits, hyphens and dots. Registering a name again replaces its schedule. */
  name: string;
  /** Five fields, six with seconds first, or a macro such as @hourly. */
  cron: string;
  /** IANA zone name; default "UTC". */
  timezone?: string;
  /** The job each tick enqueues (no id, no scheduledAt: each tick names its job and runs at the tick). */
  job: Omit<JobSpec, 'id' | 'scheduledAt'>;
  /** Default "skip". */
  overlapPolicy?: OverlapPolicy;
  /** Default "run_once". */
  missedTickPolicy?: MissedTickPolicy;
  description?: string;
  /** Register it paused: no tick until resumeSchedule. */
  paused?: boolean;
}

/** A registered schedule and what the server keeps of its runs. */
export interface Schedule extends Required<Omit<ScheduleSpec, 'overlapPolicy' | 'missedTickPolicy'>> {
  /** As the server names it ("skip", "allow", "cancel_previous", or a policy added after this SDK). */
  overlapPolicy: string;
  missedTickPolicy: string;
  createdAt: Date | undefined;
  updatedAt: Date | undefined;
  /** Unset while paused, or when the expression has no future occurrence. */
  nextRunAt: Date | undefined;
  /** The last tick that enqueued a job. */
  lastRunAt: Date | undefined;
  runCount: number;
}

export function toWireSchedule(spec: ScheduleSpec): WireSchedule {
  return {
    name: spec.name,
    cron: spec.cron,
    timezone: spec.timezone ?? '',
    template: wireSpec(spec.job),
    overlapPolicy: spec.overlapPolicy ?? '',
    missedTickPolicy: spec.missedTickPolicy ?? '',
    description: spec.description ?? '',
    paused: spec.paused ?? false,
    createdAt: undefined,
    updatedAt: undefined,
    nextRunAt: undefined,
    lastRunAt: undefined,
    runCount: 0,
  };
}

export function scheduleFromWire(schedule: WireSchedule): Schedule {
  return {
    name: schedule.name,
    cron: schedule.cron,
    timezone: schedule.timezone,
    job: templateFromWire(schedule.template),
    overlapPolicy: schedule.overlapPolicy,
    missedTickPolicy: schedule.missedTickPolicy,
    description: schedule.description,
    paused: schedule.paused,
    createdAt: schedule.createdAt,
    updatedAt: schedule.updatedAt,
    nextRunAt: schedule.nextRunAt,
    lastRunAt: schedule.lastRunAt,
    runCount: schedule.runCount,
  };
}

const ON_EXHAUSTION_NAMES = ['discard', 'dead_letter'] as const satisfies readonly (keyof typeof ON_EXHAUSTION_VALUES)[];

/** The producer's fields of a template, as a JobSpec again (the server returns the template as registered). */
function templateFromWire(job: WireJob | undefined): ScheduleSpec['job'] {
  if (job === undefined) return { type: '' };
  const template: ScheduleSpec['job'] = {
    type: job.type,
    queue: job.queue,
    args: job.args,
    meta: job.meta,
    priority: job.priority,
    timeout: job.timeout,
    expiresAt: job.expiresAt,
    visibilityTimeout: job.visibilityTimeout,
    schema: job.schema,
    totalTimeout: job.totalTimeout,
    enqueueTtl: job.enqueueTtl,
    gracePeriod: job.gracePeriod,
    heartbeatTimeout: job.heartbeatTimeout,
    unique: job.unique,
  };
  if (job.retry !== undefined) {
    const { onExhaustion, ...retry } = job.retry;
    const name = ON_EXHAUSTION_NAMES.find((key) => ON_EXHAUSTION_VALUES[key] === onExhaustion);
    template.retry = name === undefined ? retry : { ...retry, onExhaustion: name };
  }
  return template;
}
