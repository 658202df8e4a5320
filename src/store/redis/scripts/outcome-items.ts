import { summarizeError } from '../../../domain/event-facts';
import type { FailureOutcome } from '../../../domain/failure';
import type { SettlementOutcome } from '../../job-store';
import { JOB_STATES } from '../../../domain/job';
import type { JobTransition } from '../../../domain/transition';
import { readArray, readOneOf, readString, unexpectedReply } from '../reply';
import { arg, type ScriptArg } from '../script';
import { refusalError } from '../script-errors';
import { decodeTransition } from '../fact-codec';

/**
 * The fields of a decided outcome, in the order lib/job-changes.lua argOutcome
 * reads them: the outcome items of fail, recover and remove-worker.
 */
export const OUTCOME_FIELDS = [
  'jobId',
  'leaseToken',
  'state',
  'nextRetryAt',
  'deadLetter',
  'error',
  'errors',
  'errorType',
  'summary',
  'maxAttempts',
] as const;
export type OutcomeField = (typeof OUTCOME_FIELDS)[number];

export function outcomeFields(item: { jobId: string; leaseToken: string; outcome: FailureOutcome }): Record<OutcomeField, ScriptArg> {
  const { outcome } = item;
  return {
    jobId: arg.id(item.jobId, 'job id'),
    leaseToken: arg.id(item.leaseToken, 'lease token'),
    state: arg.id(outcome.state, 'outcome state'),
    nextRetryAt: outcome.state === 'retryable' ? arg.int(outcome.nextRetryAt, 'nextRetryAt') : '',
    deadLetter: arg.flag(outcome.state === 'discarded' && outcome.deadLetter),
    error: arg.json(outcome.error),
    errors: arg.json(outcome.errors),
    errorType: arg.id(outcome.error.type, 'error type'),
    summary: arg.json(summarizeError(outcome.error)),
    maxAttempts: arg.int(outcome.maxAttempts, 'maxAttempts'),
  };
}

/** Elements of ack.lua's and fail.lua's reply per item: status, current state, transition. */
const SETTLEMENT_STRIDE = 3;

/**
 * The per-item results of ack.lua and fail.lua (status, current state,
 * transition, flat, in item order) as settlement outcomes.
 */
export function readSettlements(reply: unknown, items: readonly { jobId: string }[], what: string): SettlementOutcome[] {
  const results = readArray(reply, what);
  if (results.length !== items.length * SETTLEMENT_STRIDE) unexpectedReply(`${what} (three elements per item)`, reply);
  return items.map((item, i): SettlementOutcome => {
    const at = i * SETTLEMENT_STRIDE;
    const status = results[at];
    const state = results[at + 1];
    const transition = results[at + 2];
    const code = readString(status, `${what} status`);
    if (code !== 'ok')
      return { ok: false, error: refusalError({ status: code, jobId: item.jobId, state: readString(state, `${what} state`) }) };
    // Decoded when first read: only telemetry reads it, and with telemetry off nothing does (a batch of acks
    // decoded 200 facts for nothing).
    let decoded: JobTransition | undefined;
    return {
      ok: true,
      state: readOneOf(state, JOB_STATES, `${what} state`),
      get transition(): JobTransition {
        return (decoded ??= decodeTransition(transition));
      },
    };
  });
}
