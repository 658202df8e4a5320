import type { JobSubmission } from '../../domain/job-submission';
import type { JsonObject } from '../../domain/json';
import { MISSED_TICK_POLICIES, OVERLAP_POLICIES, type Schedule, type ScheduleSpec } from '../../domain/schedule';
import {
  readFlatHash,
  readInteger,
  readJson,
  readJsonObject,
  readOneOf,
  readOptionalNumberText,
  readString,
  unexpectedReply,
} from './reply';

/**
 * How a schedule is stored (lua/lib/schedules.lua): its spec as JSON (the
 * scripts never read it), and the fields they change (paused, revision,
 * next and last run, run count, times, anchor) beside it in its hash.
 */
export function encodeScheduleSpec(spec: ScheduleSpec): string {
  const { isPaused: _isPaused, ...stored } = spec;
  return JSON.stringify(stored);
}

/** A schedule from its hash; undefined for an empty one (no such schedule). */
export function decodeSchedule(value: unknown): Schedule | undefined {
  const hash = readFlatHash(value, 'schedule');
  if (hash['spec'] === undefined) return undefined;
  const spec = readJsonObject(readJson(hash['spec'], 'schedule spec'), 'schedule spec');
  const template = readJsonObject(spec['template'], 'schedule template');
  if (!isStoredTemplate(template)) return unexpectedReply('schedule template', template);
  const schedule: Schedule = {
    name: readString(spec['name'], 'schedule name'),
    expression: readString(spec['expression'], 'schedule expression'),
    timezone: readString(spec['timezone'], 'schedule timezone'),
    template,
    overlap: readOneOf(spec['overlap'], OVERLAP_POLICIES, 'schedule overlap'),
    missedTicks: readOneOf(spec['missedTicks'], MISSED_TICK_POLICIES, 'schedule missed ticks'),
    description: readString(spec['description'], 'schedule description'),
    isPaused: readOneOf(hash['paused'], ['0', '1'], 'schedule paused') === '1',
    createdAt: readInteger(hash['createdAt'], 'schedule createdAt'),
    updatedAt: readInteger(hash['updatedAt'], 'schedule updatedAt'),
    revision: readInteger(hash['revision'], 'schedule revision'),
    anchoredAt: readInteger(hash['anchoredAt'], 'schedule anchoredAt'),
    runCount: readInteger(hash['runCount'], 'schedule runCount'),
  };
  const nextRunAt = readOptionalNumberText(hash['nextRunAt'], 'schedule nextRunAt');
  if (nextRunAt !== undefined) schedule.nextRunAt = nextRunAt;
  const lastRunAt = readOptionalNumberText(hash['lastRunAt'], 'schedule lastRunAt');
  if (lastRunAt !== undefined) schedule.lastRunAt = lastRunAt;
  return schedule;
}

/**
 * Whether a stored template has a submission's required fields. It was
 * written by encodeScheduleSpec from a template the application checked,
 * and JSON keeps a submission as it was: the rest is taken as stored.
 */
function isStoredTemplate(value: JsonObject): value is JsonObject & JobSubmission {
  return typeof value['type'] === 'string' && Array.isArray(value['args']);
}

/** A schedule a script answered after writing it: it must be there. */
export function readSchedule(value: unknown): Schedule {
  return decodeSchedule(value) ?? unexpectedReply('schedule', value);
}
