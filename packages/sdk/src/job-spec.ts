import { Job as WireJob, type DeepPartial, type RetryPolicy as WireRetryPolicy } from '../gen/ojs/server/v1/job';
import { ON_EXHAUSTION_VALUES } from './job';

/**
 * What a producer sets on a job: its type, and whatever else it needs (the
 * envelope's fields the server keeps; those it sets, such as state, errors
 * and result, are not a producer's to send).
 */
export type JobSpec = DeepPartial<Omit<WireJob, 'state' | 'error' | 'errors' | 'retry'>> & {
  type: string;
  retry?: DeepPartial<Omit<WireRetryPolicy, 'onExhaustion'>> & { onExhaustion?: keyof typeof ON_EXHAUSTION_VALUES };
};

/**
 * The spec's fields as an envelope sets them, its names as the protocol's
 * values: what a request carries (its encoder fills in the rest), without
 * the complete message that wireSpec builds.
 */
export function wireFields(spec: JobSpec): DeepPartial<WireJob> {
  const { retry, ...rest } = spec;
  const onExhaustion = retry?.onExhaustion === undefined ? undefined : ON_EXHAUSTION_VALUES[retry.onExhaustion];
  return { ...rest, retry: retry === undefined ? undefined : { ...retry, onExhaustion } };
}

/** The spec as an envelope, its names as the protocol's values; nothing added (a schedule's template is sent as it is). */
export function wireSpec(spec: JobSpec): WireJob {
  return WireJob.fromPartial(wireFields(spec));
}
