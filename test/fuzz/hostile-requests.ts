import { Job, type DeepPartial } from '../../gen/ojs/server/v1/job';
import { GetJobRequest } from '../../gen/ojs/server/v1/job_service';
import { ListQueuesRequest, ListWorkersRequest, SetWorkerStateRequest } from '../../gen/ojs/server/v1/operator_service';
import {
  AckBatchRequest,
  AckRequest,
  BeatRequest,
  DeregisterRequest,
  ExtendLeaseRequest,
  FailBatchRequest,
  FailRequest,
  FetchRequest,
  RegisterRequest,
  ReportProgressRequest,
  WorkerState,
} from '../../gen/ojs/server/v1/worker_service';
import {
  concatBytes,
  enqueueRequestBytes,
  invalidUtf8,
  lengthDelimited,
  nestedListValueBytes,
  nestedStructBytes,
  withSecondsNanos,
} from '../support/raw-protobuf';
import type { FuzzWorld } from './fuzz-world';
import type { RawRequest } from './raw-caller';

const WORKER = '/ojs.server.v1.WorkerService/';
const JOBS = '/ojs.server.v1.JobService/';
const OPERATOR = '/ojs.server.v1.OperatorService/';
const LONG_ID = 'i'.repeat(40_000);

const job = (fields: DeepPartial<Job> = {}): Uint8Array =>
  Job.encode(Job.fromPartial({ type: 'fz.hostile', queue: 'fz-a', ...fields })).finish();
const request = (path: string, description: string, ...messages: Uint8Array[]): RawRequest => ({ path, messages, description });

/**
 * The requests of issue 8's probe, and their kin: each once per fuzz run,
 * against the world's real workers and leases where they need one.
 */
export function hostileRequests(world: FuzzWorld): RawRequest[] {
  const workerId = world.workerIds[0] ?? 'fz-nobody';
  const lease = world.leases[0] ?? { workerId, jobId: '01900000-0000-7000-8000-000000000000', leaseToken: 'fz-token' };
  const healthy = [job(), job(), job()];
  const fetch = (seconds: bigint, nanos = 0): Uint8Array =>
    withSecondsNanos(FetchRequest.encode({ workerId, queues: [], maxWait: undefined }).finish(), 3, { seconds, nanos });
  return [
    request(
      JOBS + 'Enqueue',
      'healthy jobs and one expiring at seconds 10^13',
      enqueueRequestBytes([...healthy, withSecondsNanos(job(), 10, { seconds: 10n ** 13n, nanos: 0 })]),
    ),
    request(
      JOBS + 'Enqueue',
      'scheduled_at seconds 2^53',
      enqueueRequestBytes([withSecondsNanos(job(), 9, { seconds: 2n ** 53n, nanos: 0 })]),
    ),
    request(
      JOBS + 'Enqueue',
      'scheduled_at seconds 2^63 - 1',
      enqueueRequestBytes([withSecondsNanos(job(), 9, { seconds: 2n ** 63n - 1n, nanos: 0 })]),
    ),
    request(
      JOBS + 'Enqueue',
      'scheduled_at in year 10000',
      enqueueRequestBytes([withSecondsNanos(job(), 9, { seconds: 253_402_300_800n, nanos: 0 })]),
    ),
    request(
      JOBS + 'Enqueue',
      'retry intervals of P999999999D',
      enqueueRequestBytes([job({ retry: { initialInterval: 'P999999999D', maxInterval: 'P999999999D' } })]),
    ),
    request(
      JOBS + 'Enqueue',
      'args nested 120 levels',
      enqueueRequestBytes([concatBytes(job(), lengthDelimited(5, nestedListValueBytes(120)))]),
    ),
    request(
      JOBS + 'Enqueue',
      'meta nested 120 levels',
      enqueueRequestBytes([concatBytes(job(), lengthDelimited(6, nestedStructBytes(120)))]),
    ),
    request(JOBS + 'Enqueue', '8,600 jobs', enqueueRequestBytes(Array.from({ length: 8_600 }, () => job()))),
    request(JOBS + 'Enqueue', 'an id of 40,000 characters', enqueueRequestBytes([job({ id: LONG_ID })])),
    request(JOBS + 'Enqueue', 'an id of invalid UTF-8', enqueueRequestBytes([concatBytes(job(), lengthDelimited(2, invalidUtf8('0190')))])),
    request(JOBS + 'GetJob', 'an id of 40,000 characters', GetJobRequest.encode({ jobId: LONG_ID }).finish()),
    request(JOBS + 'CancelJob', 'an id of 40,000 characters', GetJobRequest.encode({ jobId: LONG_ID }).finish()),
    request(JOBS + 'ActivateJob', 'an id of 40,000 characters', GetJobRequest.encode({ jobId: LONG_ID }).finish()),
    request(JOBS + 'RetryJob', 'an id of 40,000 characters', GetJobRequest.encode({ jobId: LONG_ID }).finish()),
    request(JOBS + 'GetJob', 'an id of invalid UTF-8', lengthDelimited(1, invalidUtf8())),
    request(
      WORKER + 'Register',
      'a worker id of 40,000 characters',
      RegisterRequest.encode(RegisterRequest.fromPartial({ workerId: LONG_ID })).finish(),
    ),
    request(WORKER + 'Register', 'a worker id of invalid UTF-8', lengthDelimited(1, invalidUtf8())),
    request(
      WORKER + 'Register',
      'started_at at seconds 10^13',
      withSecondsNanos(RegisterRequest.encode(RegisterRequest.fromPartial({ workerId: 'fz-late' })).finish(), 7, {
        seconds: 10n ** 13n,
        nanos: 0,
      }),
    ),
    request(
      WORKER + 'Register',
      'started_at in year 10000',
      withSecondsNanos(RegisterRequest.encode(RegisterRequest.fromPartial({ workerId: 'fz-future' })).finish(), 7, {
        seconds: 253_402_300_800n,
        nanos: 0,
      }),
    ),
    request(
      WORKER + 'Register',
      '101 queues, concurrency 2^31 - 1',
      RegisterRequest.encode(
        RegisterRequest.fromPartial({
          workerId: 'fz-greedy',
          queues: Array.from({ length: 101 }, (_, i) => `q${i}`),
          concurrency: 2 ** 31 - 1,
        }),
      ).finish(),
    ),
    request(WORKER + 'Deregister', 'a worker id of 40,000 characters', DeregisterRequest.encode({ workerId: LONG_ID }).finish()),
    request(WORKER + 'Deregister', 'a worker id of invalid UTF-8', lengthDelimited(1, invalidUtf8())),
    request(WORKER + 'Fetch', 'max_wait of -1 s', fetch(-1n)),
    request(WORKER + 'Fetch', 'max_wait of 25 days', fetch(25n * 86_400n)),
    request(WORKER + 'Fetch', 'max_wait seconds 2^60', fetch(2n ** 60n)),
    request(WORKER + 'Fetch', 'max_wait nanos -1', fetch(0n, -1)),
    request(
      WORKER + 'Fetch',
      'a worker id of 40,000 characters',
      FetchRequest.encode({ workerId: LONG_ID, queues: [], maxWait: undefined }).finish(),
    ),
    request(
      WORKER + 'Ack',
      'ids of 40,000 characters',
      AckRequest.encode(AckRequest.fromPartial({ workerId: LONG_ID, jobId: LONG_ID, leaseToken: LONG_ID })).finish(),
    ),
    request(
      WORKER + 'Ack',
      'a job id of invalid UTF-8',
      concatBytes(
        AckRequest.encode(AckRequest.fromPartial({ workerId, leaseToken: lease.leaseToken })).finish(),
        lengthDelimited(2, invalidUtf8()),
      ),
    ),
    request(
      WORKER + 'Ack',
      'a result nested 120 levels',
      concatBytes(AckRequest.encode(AckRequest.fromPartial(lease)).finish(), lengthDelimited(4, nestedListValueBytes(120))),
    ),
    request(
      WORKER + 'AckBatch',
      '42,000 items',
      AckBatchRequest.encode(
        AckBatchRequest.fromPartial({
          workerId,
          completions: Array.from({ length: 42_000 }, (_, i) => ({ jobId: lease.jobId, leaseToken: `t${i}` })),
        }),
      ).finish(),
    ),
    request(
      WORKER + 'AckBatch',
      '10,000 items',
      AckBatchRequest.encode(
        AckBatchRequest.fromPartial({
          workerId,
          completions: Array.from({ length: 10_000 }, (_, i) => ({ jobId: lease.jobId, leaseToken: `t${i}` })),
        }),
      ).finish(),
    ),
    request(
      WORKER + 'Fail',
      'an error type of 3 MB',
      FailRequest.encode(FailRequest.fromPartial({ ...lease, error: { type: 'T'.repeat(3_000_000) } })).finish(),
    ),
    request(
      WORKER + 'Fail',
      'error details nested 120 levels',
      concatBytes(
        FailRequest.encode(FailRequest.fromPartial(lease)).finish(),
        lengthDelimited(4, concatBytes(lengthDelimited(1, Buffer.from('Timeout')), lengthDelimited(5, nestedStructBytes(120)))),
      ),
    ),
    request(
      WORKER + 'FailBatch',
      'one error type of 3 MB among healthy items',
      FailBatchRequest.encode(
        FailBatchRequest.fromPartial({
          workerId,
          failures: [
            { ...lease, error: { type: 'T'.repeat(3_000_000) } },
            ...world.leases.slice(1, 4).map((l) => ({ ...l, error: { type: 'Timeout' } })),
          ],
        }),
      ).finish(),
    ),
    request(
      WORKER + 'ExtendLease',
      'ids of 40,000 characters',
      ExtendLeaseRequest.encode({ workerId: LONG_ID, jobId: LONG_ID, leaseToken: LONG_ID }).finish(),
    ),
    request(
      WORKER + 'ReportProgress',
      'progress NaN and data nested 120 levels',
      concatBytes(
        ReportProgressRequest.encode(ReportProgressRequest.fromPartial({ ...lease, progress: Number.NaN })).finish(),
        lengthDelimited(5, nestedStructBytes(120)),
      ),
    ),
    request(
      WORKER + 'Beat',
      'a worker id of 40,000 characters',
      BeatRequest.encode(BeatRequest.fromPartial({ workerId: LONG_ID, state: WorkerState.WORKER_STATE_RUNNING, sequence: 1 })).finish(),
    ),
    request(WORKER + 'Beat', 'a worker id of invalid UTF-8', lengthDelimited(1, invalidUtf8())),
    request(
      WORKER + 'Beat',
      'a sequence of 2^64 - 1',
      BeatRequest.encode(BeatRequest.fromPartial({ workerId, state: WorkerState.WORKER_STATE_RUNNING })).finish(),
      concatBytes(
        BeatRequest.encode(BeatRequest.fromPartial({ workerId, state: WorkerState.WORKER_STATE_RUNNING })).finish(),
        Uint8Array.of(0x28, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01),
      ),
    ),
    request(
      OPERATOR + 'ListWorkers',
      'a page token of 40,000 characters',
      ListWorkersRequest.encode(ListWorkersRequest.fromPartial({ pageToken: LONG_ID })).finish(),
    ),
    request(
      OPERATOR + 'ListWorkers',
      'a label of 40,000 characters',
      ListWorkersRequest.encode(ListWorkersRequest.fromPartial({ label: LONG_ID })).finish(),
    ),
    request(
      OPERATOR + 'ListQueues',
      'a page size of 2^31 - 1',
      ListQueuesRequest.encode({ pageSize: 2 ** 31 - 1, pageToken: '' }).finish(),
    ),
    request(
      OPERATOR + 'SetWorkerState',
      'a worker id of 40,000 characters',
      SetWorkerStateRequest.encode({ state: WorkerState.WORKER_STATE_QUIET, target: { $case: 'workerId', value: LONG_ID } }).finish(),
    ),
  ];
}
