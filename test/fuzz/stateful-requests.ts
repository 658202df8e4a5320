import * as fc from 'fast-check';
import { HandlerCode, type DeepPartial, type JobError } from '../../gen/ojs/server/v1/job';
import { CancelJobRequest, EnqueueRequest, GetJobRequest } from '../../gen/ojs/server/v1/job_service';
import { ListQueuesRequest, ListWorkersRequest, SetWorkerStateRequest, WatchEventsRequest } from '../../gen/ojs/server/v1/operator_service';
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
import { envelopeCase } from '../support/envelope-arbitraries';
import { sendEnvelope } from '../support/envelope-oracle';
import { enqueueRequestBytes, withSecondsNanos } from '../support/raw-protobuf';
import type { Draw } from './draw';
import { hostileText, jsonValue, wildTimestamp } from './fuzz-values';
import type { FuzzWorld, HeldLease } from './fuzz-world';

/** Request messages (one, or several for a client stream) and what they are. */
export interface BuiltRequest {
  messages: Uint8Array[];
  description: string;
}

type Builder = (world: FuzzWorld, draw: Draw) => BuiltRequest;

const one = (bytes: Uint8Array, description: string): BuiltRequest => ({ messages: [bytes], description });

/** A lease of the world most of the time; otherwise a made-up or stale one. */
function leaseOf(world: FuzzWorld, draw: Draw): HeldLease {
  if (world.leases.length > 0 && draw.chance(0.75)) return draw.pick(world.leases);
  const workerId = world.workerIds.length > 0 ? draw.pick(world.workerIds) : hostileText(draw);
  return { workerId, jobId: world.jobIds.length > 0 ? draw.pick(world.jobIds) : draw.uuidv7(), leaseToken: hostileText(draw) };
}

function jobIdOf(world: FuzzWorld, draw: Draw): string {
  return world.jobIds.length > 0 && draw.chance(0.8) ? draw.pick(world.jobIds) : hostileText(draw);
}

function workerIdOf(world: FuzzWorld, draw: Draw): string {
  return world.workerIds.length > 0 && draw.chance(0.7) ? draw.pick(world.workerIds) : hostileText(draw);
}

/** A failure report: valid types and sizes, or types too long, details too large or deep. */
function failureReport(draw: Draw): DeepPartial<JobError> {
  return {
    type: draw.weighted([
      [4, () => draw.pick(['Timeout', 'fz.failed', 'net.refused'])],
      [1, () => hostileText(draw)],
      [1, () => 'T'.repeat(draw.pick([255, 256, 300_000]))],
    ]),
    message: draw.chance(0.9) ? 'failed' : 'm'.repeat(draw.pick([10_000, 10_001, 200_000])),
    backtrace: Array.from({ length: draw.pick([0, 2, 50, 51]) }, (_, i) => `frame ${i}`),
    code: draw.pick([HandlerCode.HANDLER_CODE_UNSPECIFIED, HandlerCode.HANDLER_CODE_RETRY, HandlerCode.HANDLER_CODE_DISCARD]),
    details: draw.weighted<Record<string, unknown> | undefined>([
      [3, () => undefined],
      [2, () => ({ value: jsonValue(draw) })],
      [1, () => ({ blob: 'd'.repeat(draw.pick([4_000, 5_000])) })],
    ]),
  };
}

/**
 * Requests built with the generated types (fromPartial, encoded) from what
 * the world holds: settlements with real leases, beats listing held jobs,
 * directives to live workers, enqueues of generated envelopes. Methods
 * without a builder get generated messages only.
 */
export const STATEFUL_BUILDERS: Readonly<Record<string, Builder>> = {
  '/ojs.server.v1.WorkerService/Register': (world, draw) => {
    const request = RegisterRequest.fromPartial({
      workerId: draw.chance(0.3) ? workerIdOf(world, draw) : `fz-r${draw.int(0, 1e9)}`,
      hostname: draw.chance(0.8) ? 'fz-host' : hostileText(draw),
      pid: draw.int(-1, 100_000),
      queues: draw.chance(0.9) ? world.queues.slice(0, draw.int(0, 3)) : Array.from({ length: 101 }, (_, i) => `q${i}`),
      concurrency: draw.pick([0, 1, 10, 10_000, 10_001, -1]),
      labels: draw.chance(0.8) ? world.labels : [hostileText(draw)],
    });
    const bytes = RegisterRequest.encode(request).finish();
    return draw.chance(0.3) ? one(withSecondsNanos(bytes, 7, wildTimestamp(draw)), 'Register, started_at wild') : one(bytes, 'Register');
  },
  '/ojs.server.v1.WorkerService/Deregister': (world, draw) =>
    one(DeregisterRequest.encode({ workerId: workerIdOf(world, draw) }).finish(), 'Deregister'),
  '/ojs.server.v1.WorkerService/Fetch': (world, draw) => {
    const maxWait = { seconds: 0, nanos: draw.int(1, 5) * 100_000_000 };
    const request = FetchRequest.fromPartial({ workerId: workerIdOf(world, draw), queues: world.queues.slice(0, draw.int(0, 3)), maxWait });
    return one(FetchRequest.encode(request).finish(), 'Fetch with a short max_wait');
  },
  '/ojs.server.v1.WorkerService/Ack': (world, draw) => {
    const lease = leaseOf(world, draw);
    return one(AckRequest.encode(AckRequest.fromPartial({ ...lease, result: jsonValue(draw) })).finish(), 'Ack of a lease');
  },
  '/ojs.server.v1.WorkerService/AckBatch': (world, draw) => {
    const leases = Array.from({ length: draw.int(1, 20) }, () => leaseOf(world, draw));
    const request = AckBatchRequest.fromPartial({
      workerId: draw.chance(0.8) ? leases[0]!.workerId : workerIdOf(world, draw),
      completions: leases.map((lease) => ({ jobId: lease.jobId, leaseToken: lease.leaseToken, result: jsonValue(draw) })),
    });
    return one(AckBatchRequest.encode(request).finish(), `AckBatch of ${leases.length} leases`);
  },
  '/ojs.server.v1.WorkerService/Fail': (world, draw) => {
    const request = FailRequest.fromPartial({ ...leaseOf(world, draw), error: failureReport(draw) });
    return one(FailRequest.encode(request).finish(), 'Fail of a lease');
  },
  '/ojs.server.v1.WorkerService/FailBatch': (world, draw) => {
    const leases = Array.from({ length: draw.int(1, 10) }, () => leaseOf(world, draw));
    const request = FailBatchRequest.fromPartial({
      workerId: leases[0]!.workerId,
      failures: leases.map((lease) => ({ jobId: lease.jobId, leaseToken: lease.leaseToken, error: failureReport(draw) })),
    });
    return one(FailBatchRequest.encode(request).finish(), `FailBatch of ${leases.length} leases`);
  },
  '/ojs.server.v1.WorkerService/Beat': (world, draw) => {
    const workerId = workerIdOf(world, draw);
    const held = world.leases.filter((lease) => lease.workerId === workerId).map((lease) => lease.jobId);
    const states = [
      WorkerState.WORKER_STATE_RUNNING,
      WorkerState.WORKER_STATE_QUIET,
      WorkerState.WORKER_STATE_TERMINATE,
      WorkerState.WORKER_STATE_UNSPECIFIED,
    ];
    const sequence = draw.int(1, 1_000);
    const messages = Array.from({ length: draw.int(1, 3) }, (_, i) =>
      BeatRequest.encode(
        BeatRequest.fromPartial({
          workerId: i > 0 && draw.chance(0.1) ? hostileText(draw) : workerId,
          state: draw.chance(0.8) ? WorkerState.WORKER_STATE_RUNNING : draw.pick(states),
          activeJobs: held.length,
          activeJobIds: draw.chance(0.9) ? held : [hostileText(draw)],
          sequence: sequence + i,
        }),
      ).finish(),
    );
    return { messages, description: `Beat, ${messages.length} messages, then half-close` };
  },
  '/ojs.server.v1.WorkerService/ExtendLease': (world, draw) =>
    one(ExtendLeaseRequest.encode(leaseOf(world, draw)).finish(), 'ExtendLease of a lease'),
  '/ojs.server.v1.WorkerService/ReportProgress': (world, draw) => {
    const progress = draw.pick([0, 0.5, 1, 2, -1, Number.NaN, Infinity, undefined]);
    const request = ReportProgressRequest.fromPartial({
      ...leaseOf(world, draw),
      progress,
      data: draw.chance(0.5) ? { value: jsonValue(draw) } : undefined,
      checkpoint: draw.chance(0.5) ? jsonValue(draw) : undefined,
    });
    return one(ReportProgressRequest.encode(request).finish(), 'ReportProgress of a lease');
  },
  '/ojs.server.v1.JobService/Enqueue': (world, draw) => {
    if (draw.chance(0.5)) {
      const cases = fc.sample(envelopeCase({ isAlone: false }), { seed: draw.seedForSample(), numRuns: draw.int(1, 4) });
      return one(
        enqueueRequestBytes(
          cases.map((c) => sendEnvelope(c).bytes),
          draw.chance(0.2),
        ),
        `Enqueue of ${cases.length} generated envelopes`,
      );
    }
    const jobs = Array.from({ length: draw.int(1, 5) }, () => ({
      type: 'fz.echo',
      queue: draw.pick(world.queues),
      args: [jsonValue(draw)],
      meta: draw.chance(0.3) ? { note: jsonValue(draw) } : undefined,
    }));
    return one(EnqueueRequest.encode(EnqueueRequest.fromPartial({ jobs, pending: draw.chance(0.3) })).finish(), 'Enqueue into the world');
  },
  '/ojs.server.v1.JobService/GetJob': (world, draw) => one(GetJobRequest.encode({ jobId: jobIdOf(world, draw) }).finish(), 'GetJob'),
  '/ojs.server.v1.JobService/CancelJob': (world, draw) =>
    one(CancelJobRequest.encode({ jobId: jobIdOf(world, draw) }).finish(), 'CancelJob'),
  // ActivateJob and RetryJob take the same message as CancelJob.
  '/ojs.server.v1.JobService/ActivateJob': (world, draw) =>
    one(CancelJobRequest.encode({ jobId: jobIdOf(world, draw) }).finish(), 'ActivateJob'),
  '/ojs.server.v1.JobService/RetryJob': (world, draw) => one(CancelJobRequest.encode({ jobId: jobIdOf(world, draw) }).finish(), 'RetryJob'),
  '/ojs.server.v1.OperatorService/ListWorkers': (world, draw) => {
    const request = ListWorkersRequest.fromPartial({
      label: draw.chance(0.3) ? draw.pick(world.labels) : '',
      queue: draw.chance(0.3) ? draw.pick(world.queues) : '',
      pageSize: draw.pick([0, 1, 2, 1_000, 1_001, -1]),
      pageToken: draw.chance(0.3) ? workerIdOf(world, draw) : '',
    });
    return one(ListWorkersRequest.encode(request).finish(), 'ListWorkers');
  },
  '/ojs.server.v1.OperatorService/SetWorkerState': (world, draw) => {
    const target = draw.weighted<SetWorkerStateRequest['target']>([
      [4, () => ({ $case: 'workerId', value: workerIdOf(world, draw) })],
      [1, () => ({ $case: 'label', value: draw.pick(world.labels) })],
      [1, () => ({ $case: 'queue', value: draw.pick(world.queues) })],
    ]);
    // Mostly back to running, so that the world keeps workers that fetch.
    const state = draw.pick([
      WorkerState.WORKER_STATE_RUNNING,
      WorkerState.WORKER_STATE_RUNNING,
      WorkerState.WORKER_STATE_QUIET,
      WorkerState.WORKER_STATE_TERMINATE,
      WorkerState.WORKER_STATE_UNSPECIFIED,
    ]);
    return one(SetWorkerStateRequest.encode({ state, target }).finish(), 'SetWorkerState');
  },
  '/ojs.server.v1.OperatorService/ListQueues': (_world, draw) =>
    one(
      ListQueuesRequest.encode({
        pageSize: draw.pick([0, 1, 2, 1_000, 1_001, -1]),
        pageToken: draw.pick(['', 'fz-a', 'zzz', '-']),
      }).finish(),
      'ListQueues',
    ),
  '/ojs.server.v1.OperatorService/WatchEvents': (world, draw) =>
    one(
      WatchEventsRequest.encode({
        types: draw.chance(0.5) ? ['job.completed'] : [],
        queues: [draw.pick(world.queues)],
        after: '',
        jobTypes: [],
        jobIds: [],
        includeHeartbeats: draw.chance(0.2),
      }).finish(),
      'WatchEvents',
    ),
};
