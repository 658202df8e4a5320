import type { BulkChangeParams, BulkOutcome } from '../../job-store';
import { decodeTransition } from '../fact-codec';
import { readArray, readString, unexpectedReply } from '../reply';
import { appendBatch, arg, type ScriptArg } from '../script';
import { refusalError } from '../script-errors';

/**
 * What the bulk scripts (cancel-jobs, retry-jobs, delete-jobs) share: a
 * batch of job ids after their own arguments, and a reply of one
 * {status, state, transition} per id in order.
 */

export function bulkArgs(args: ScriptArg[], params: BulkChangeParams): ScriptArg[] {
  return appendBatch(args, ['jobId'], params.jobIds, (jobId) => ({ jobId: arg.id(jobId, 'job id') }));
}

/**
 * The outcomes of a bulk script: ok with the transition it made (none when
 * nothing changed), or the refusal (`wanted` names the state asked for).
 */
export function readBulkOutcomes(reply: unknown, params: BulkChangeParams, wanted: string): BulkOutcome[] {
  const results = readArray(reply, wanted);
  if (results.length !== params.jobIds.length) unexpectedReply(`${wanted} (one result per job)`, reply);
  return results.map((result, i): BulkOutcome => {
    const [status, state, transition] = readArray(result, `${wanted} result`);
    const code = readString(status, `${wanted} status`);
    if (code !== 'ok') {
      return {
        ok: false,
        error: refusalError({ status: code, jobId: params.jobIds[i]!, state: readString(state, `${wanted} state`), wanted }),
      };
    }
    return transition === undefined ? { ok: true } : { ok: true, transition: decodeTransition(transition) };
  });
}
