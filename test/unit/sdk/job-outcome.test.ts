import { HandlerCode, Job as WireJob, JobState } from '../../../packages/sdk/gen/ojs/server/v1/job';
import { JobCancelledError, JobFailedError, JobWaitTimeoutError } from '../../../packages/sdk/src';
import { jobFromWire, type Job } from '../../../packages/sdk/src/job';
import { outcomeOf } from '../../../packages/sdk/src/job-outcome';
import { concatBytes, varintField } from '../../support/raw-protobuf';
import { thrownBy } from '../../support/thrown';

const ID = '019539a4-b68c-7def-8000-1a2b3c4d5e6f';

const finished = (state: JobState, fields: Parameters<typeof WireJob.fromPartial>[0] = {}): Job =>
  jobFromWire(WireJob.fromPartial({ id: ID, type: 'report.build', state, ...fields }));

describe('the outcome of a finished job', () => {
  it("is the handler's result when the job completed, whatever JSON it is", () => {
    expect(outcomeOf(finished(JobState.JOB_STATE_COMPLETED, { result: { rows: [1, null, 'x'] } }))).toEqual({ rows: [1, null, 'x'] });
    expect(outcomeOf(finished(JobState.JOB_STATE_COMPLETED))).toBeUndefined();
  });

  it('is a JobFailedError with the last error when the job was discarded', () => {
    const error = thrownBy(() =>
      outcomeOf(
        finished(JobState.JOB_STATE_DISCARDED, {
          attempt: 3,
          deadLetter: true,
          error: { type: 'ledger.unreachable', message: 'timed out', attempt: 3, code: HandlerCode.HANDLER_CODE_DEAD_LETTER },
          errors: [{ type: 'ledger.unreachable', message: 'refused', attempt: 1 }],
        }),
      ),
    );
    expect(error).toBeInstanceOf(JobFailedError);
    expect(error).toMatchObject({
      name: 'JobFailedError',
      jobId: ID,
      isDeadLetter: true,
      error: { type: 'ledger.unreachable', attempt: 3, code: 'dead_letter' },
    });
    expect((error as Error).message).toBe(
      `job ${ID} (report.build) was discarded into the dead letter set after attempt 3: ledger.unreachable: timed out`,
    );
  });

  it('says a job discarded before it ran (expired) was, and copes with a discard that recorded no error', () => {
    const expired = finished(JobState.JOB_STATE_DISCARDED, { error: { type: 'enqueue_ttl_expired', message: 'waited too long' } });
    expect((thrownBy(() => outcomeOf(expired)) as Error).message).toBe(
      `job ${ID} (report.build) was discarded before it ran: enqueue_ttl_expired: waited too long`,
    );
    const bare = thrownBy(() => outcomeOf(finished(JobState.JOB_STATE_DISCARDED, { attempt: 1 })));
    expect(bare).toMatchObject({
      error: undefined,
      isDeadLetter: false,
      message: `job ${ID} (report.build) was discarded after attempt 1: no error recorded`,
    });
  });

  it('is a JobCancelledError when the job was cancelled', () => {
    const error = thrownBy(() => outcomeOf(finished(JobState.JOB_STATE_CANCELLED)));
    expect(error).toBeInstanceOf(JobCancelledError);
    expect(error).toMatchObject({ name: 'JobCancelledError', jobId: ID, message: `job ${ID} (report.build) was cancelled` });
  });

  it('is no outcome for a job that has not finished', () => {
    expect((thrownBy(() => outcomeOf(finished(JobState.JOB_STATE_ACTIVE))) as Error).message).toBe(`job ${ID} is active, not finished`);
    // A state added to the contract after this SDK was built arrives as its number.
    const unspecified = WireJob.fromPartial({ id: ID, type: 'report.build' });
    const fromNewerServer = WireJob.decode(concatBytes(WireJob.encode(unspecified).finish(), varintField(20, 99n)));
    expect((thrownBy(() => outcomeOf(jobFromWire(fromNewerServer))) as Error).message).toBe(`job ${ID} is unrecognized, not finished`);
  });

  it('names the state a timed-out wait last saw, when it saw one', () => {
    expect(new JobWaitTimeoutError(ID, 500, finished(JobState.JOB_STATE_RETRYABLE)).message).toBe(
      `job ${ID} did not finish within 500 ms (still retryable)`,
    );
    expect(new JobWaitTimeoutError(ID, 500, undefined).message).toBe(`job ${ID} did not finish within 500 ms`);
  });
});
