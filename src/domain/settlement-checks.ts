import { invalidRequest, OjsError, resultTooLarge } from './errors';
import { errorTypeProblem, jobIdProblem, leaseTokenProblem } from './identifiers';
import type { HandlerCode } from './job';
import type { FailureReport } from './job-error';
import { checkJson, checkJsonObject, type JsonValue } from './json';
import { ERROR_DETAILS_MAX_BYTES, MAX_SETTLE_BATCH, type PayloadLimits } from './limits';

/** An Ack as a worker sends it: the result is whatever the decoder produced. */
export interface CompletionInput {
  jobId: string;
  leaseToken: string;
  result?: unknown;
}

/** A checked Ack, its result JSON within the limit. */
export interface Completion {
  jobId: string;
  leaseToken: string;
  result?: JsonValue;
}

/** A failure report as a worker sends it (ojs-core 8). */
export interface FailureReportInput {
  type: string;
  message: string;
  backtrace: readonly string[];
  code?: HandlerCode;
  details?: unknown;
}

export interface FailureInput {
  jobId: string;
  leaseToken: string;
  report: FailureReportInput;
}

export interface FailureItem {
  jobId: string;
  leaseToken: string;
  report: FailureReport;
}

/** Refuses a settlement batch larger than a worker can hold. */
export function assertSettleBatch(field: string, count: number): void {
  if (count > MAX_SETTLE_BATCH) throw invalidRequest(field, `at most ${MAX_SETTLE_BATCH} items per call`);
}

/**
 * Checks one Ack. A result over the limit is refused as `result_too_large`,
 * the job staying active (ojs-results 7.2); the worker may fail it instead.
 */
export function checkCompletion(input: CompletionInput, limits: PayloadLimits): Completion | OjsError {
  const problem = leaseProblemOf(input);
  if (problem !== undefined) return problem;
  const completion: Completion = { jobId: input.jobId, leaseToken: input.leaseToken };
  if (input.result === undefined) return completion;
  const result = checkJson(input.result);
  if (!result.ok) return invalidRequest('result', result.problem);
  if (result.bytes > limits.maxResultBytes) return resultTooLarge(input.jobId, result.bytes, limits.maxResultBytes);
  completion.result = result.value;
  return completion;
}

/** Checks one Fail: the error type is required; details are a small JSON object. */
export function checkFailure(input: FailureInput): FailureItem | OjsError {
  const problem = leaseProblemOf(input);
  if (problem !== undefined) return problem;
  const { type, message, backtrace, code, details } = input.report;
  const typeProblem = errorTypeProblem(type);
  if (typeProblem !== undefined) return invalidRequest('error.type', typeProblem);
  const report: FailureReport = { type, message, backtrace: [...backtrace] };
  if (code !== undefined) report.code = code;
  if (details !== undefined) {
    const checked = checkJsonObject(details);
    if (!checked.ok) return invalidRequest('error.details', checked.problem);
    if (checked.bytes > ERROR_DETAILS_MAX_BYTES) {
      return invalidRequest('error.details', `is ${checked.bytes} bytes; at most ${ERROR_DETAILS_MAX_BYTES} are accepted`);
    }
    report.details = checked.value;
  }
  return { jobId: input.jobId, leaseToken: input.leaseToken, report };
}

/** The refusal of an item whose job id or lease token cannot be one. */
function leaseProblemOf(input: { jobId: string; leaseToken: string }): OjsError | undefined {
  const jobProblem = jobIdProblem(input.jobId);
  if (jobProblem !== undefined) return invalidRequest('job_id', jobProblem);
  const tokenProblem = leaseTokenProblem(input.leaseToken);
  return tokenProblem === undefined ? undefined : invalidRequest('lease_token', tokenProblem);
}
