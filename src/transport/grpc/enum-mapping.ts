import { invalidRequest } from '../../domain/errors';
import type { HandlerCode, JobState } from '../../domain/job';
import type { OnExhaustion } from '../../domain/retry-policy';
import type { WorkerState } from '../../domain/worker';
import {
  HandlerCode as ProtoHandlerCode,
  JobState as ProtoJobState,
  OnExhaustion as ProtoOnExhaustion,
} from '../../../gen/ojs/server/v1/job';
import { WorkerState as ProtoWorkerState } from '../../../gen/ojs/server/v1/worker_service';

/** Domain enums and their protobuf twins, each written once and inverted. */
const JOB_STATES: Record<JobState, ProtoJobState> = {
  scheduled: ProtoJobState.JOB_STATE_SCHEDULED,
  available: ProtoJobState.JOB_STATE_AVAILABLE,
  pending: ProtoJobState.JOB_STATE_PENDING,
  active: ProtoJobState.JOB_STATE_ACTIVE,
  completed: ProtoJobState.JOB_STATE_COMPLETED,
  retryable: ProtoJobState.JOB_STATE_RETRYABLE,
  cancelled: ProtoJobState.JOB_STATE_CANCELLED,
  discarded: ProtoJobState.JOB_STATE_DISCARDED,
};

const WORKER_STATES: Record<WorkerState, ProtoWorkerState> = {
  running: ProtoWorkerState.WORKER_STATE_RUNNING,
  quiet: ProtoWorkerState.WORKER_STATE_QUIET,
  terminate: ProtoWorkerState.WORKER_STATE_TERMINATE,
};

const HANDLER_CODES: Record<HandlerCode, ProtoHandlerCode> = {
  retry: ProtoHandlerCode.HANDLER_CODE_RETRY,
  discard: ProtoHandlerCode.HANDLER_CODE_DISCARD,
  dead_letter: ProtoHandlerCode.HANDLER_CODE_DEAD_LETTER,
  fail: ProtoHandlerCode.HANDLER_CODE_FAIL,
};

const ON_EXHAUSTION: Record<OnExhaustion, ProtoOnExhaustion> = {
  discard: ProtoOnExhaustion.ON_EXHAUSTION_DISCARD,
  dead_letter: ProtoOnExhaustion.ON_EXHAUSTION_DEAD_LETTER,
};

function invert<K extends string, V extends number>(table: Record<K, V>): Map<V, K> {
  const inverse = new Map<V, K>();
  for (const key of Object.keys(table)) if (isKeyOf(table, key)) inverse.set(table[key], key);
  return inverse;
}

function isKeyOf<K extends string>(table: Record<K, unknown>, key: string): key is K {
  return Object.hasOwn(table, key);
}

const JOB_STATE_OF = invert(JOB_STATES);
const WORKER_STATE_OF = invert(WORKER_STATES);
const HANDLER_CODE_OF = invert(HANDLER_CODES);
const ON_EXHAUSTION_OF = invert(ON_EXHAUSTION);

export const toProtoJobState = (state: JobState): ProtoJobState => JOB_STATES[state];
export const toProtoWorkerState = (state: WorkerState): ProtoWorkerState => WORKER_STATES[state];
export const toProtoHandlerCode = (code: HandlerCode | undefined): ProtoHandlerCode =>
  code === undefined ? ProtoHandlerCode.HANDLER_CODE_UNSPECIFIED : HANDLER_CODES[code];
export const toProtoOnExhaustion = (value: OnExhaustion): ProtoOnExhaustion => ON_EXHAUSTION[value];

/** The domain worker state, or undefined for UNSPECIFIED and unknown values. */
export const fromProtoWorkerState = (state: ProtoWorkerState): WorkerState | undefined => WORKER_STATE_OF.get(state);
/** UNSPECIFIED means "no verdict": the retry policy applies. */
export const fromProtoHandlerCode = (code: ProtoHandlerCode): HandlerCode | undefined => HANDLER_CODE_OF.get(code);
export const fromProtoOnExhaustion = (value: ProtoOnExhaustion): OnExhaustion | undefined => ON_EXHAUSTION_OF.get(value);

/** Job states a request names; UNSPECIFIED or an unknown value is refused, naming the field. */
export function fromProtoJobStates(states: readonly ProtoJobState[], field: string): JobState[] {
  return states.map((state, i) => {
    const known = JOB_STATE_OF.get(state);
    if (known === undefined) throw invalidRequest(`${field}[${i}]`, `${state} is not a job state`);
    return known;
  });
}
