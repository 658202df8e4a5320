import type { JobFilterInput } from '../../domain/job-query';
import type { JobFilter as ProtoJobFilter } from '../../../gen/ojs/server/v1/operator_service';
import { fromProtoJobStates } from './enum-mapping';
import { fromDate } from './time-mapping';

/** A filter as the domain reads it; unknown states are refused by the enum mapping, values by the domain. */
export function toJobFilterInput(filter: ProtoJobFilter | undefined, field = 'filter'): JobFilterInput {
  const input: JobFilterInput = {
    states: fromProtoJobStates(filter?.states ?? [], `${field}.states`),
    queue: filter?.queue ?? '',
    type: filter?.type ?? '',
    schedule: filter?.schedule ?? '',
    workflow: filter?.workflowId ?? '',
    errorType: filter?.errorType ?? '',
  };
  if (filter?.deadLetter !== undefined) input.deadLetter = filter.deadLetter;
  const times = [
    ['createdAfter', filter?.createdAfter],
    ['createdBefore', filter?.createdBefore],
    ['finishedAfter', filter?.finishedAfter],
    ['finishedBefore', filter?.finishedBefore],
  ] as const;
  for (const [name, date] of times) if (date !== undefined) input[name] = fromDate(date)!;
  return input;
}
