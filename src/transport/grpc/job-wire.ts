import { BinaryWriter } from '@bufbuild/protobuf/wire';
import type { Job } from '../../domain/job';
import type { JsonObject, JsonValue } from '../../domain/json';
import { visibilityDeadline } from '../../domain/lease';
import { isDefaultRetryPolicy } from '../../domain/retry-policy';
import { describeUniquePolicy } from '../../domain/unique-policy';
import { JobError, JobState, RetryPolicy, UniquePolicy } from '../../../gen/ojs/server/v1/job';
import { DEFAULT_PROTO_RETRY_POLICY, describePolicy, seconds, toProtoJobError } from './job-mapper';
import { toProtoJobState } from './enum-mapping';

/**
 * The envelope of a job as bytes, written straight from the domain's job:
 * exactly what `Job.encode(toProtoJob(job))` writes (test/unit/transport/
 * job-wire.test.ts compares the two on generated jobs), without building
 * the message first. The server writes an envelope for every job it
 * delivers and every job it answers an enqueue with, and building the
 * message (a Date per time, a wrapper object per JSON value, for args,
 * meta and each value within) cost more than writing the bytes. Fields
 * most jobs leave empty (an error, a result, a unique policy) go through
 * the generated encoders.
 */
export function writeJob(writer: BinaryWriter, job: Job, parentResults?: JsonObject): BinaryWriter {
  if (job.specversion !== '') writer.uint32(10).string(job.specversion);
  if (job.id !== '') writer.uint32(18).string(job.id);
  if (job.type !== '') writer.uint32(26).string(job.type);
  if (job.queue !== '') writer.uint32(34).string(job.queue);
  for (const value of job.args) writeValue(writer.uint32(42).fork(), value).join();
  writeStruct(writer.uint32(50).fork(), job.meta).join();
  if (job.priority !== 0) writer.uint32(56).int32(job.priority);
  writeSeconds(writer, 64, job.timeoutMs);
  writeTimestamp(writer, 74, job.scheduledAt);
  writeTimestamp(writer, 82, job.expiresAt);
  if (isDefaultRetryPolicy(job.retry)) writer.uint32(90).bytes(DEFAULT_RETRY_POLICY_BYTES);
  else RetryPolicy.encode(describePolicy(job.retry), writer.uint32(90).fork()).join();
  writeSeconds(writer, 96, job.visibilityTimeoutMs);
  if (job.schema !== undefined && job.schema !== '') writer.uint32(106).string(job.schema);
  writeSeconds(writer, 112, job.totalTimeoutMs);
  writeSeconds(writer, 120, job.enqueueTtlMs);
  // An optional field: written whenever it is set, 0 included.
  writer.uint32(128).int32(seconds(job.gracePeriodMs));
  writeSeconds(writer, 136, job.heartbeatTimeoutMs);
  if (job.unique !== undefined) UniquePolicy.encode(describeUniquePolicy(job.unique.policy), writer.uint32(146).fork()).join();
  const state = toProtoJobState(job.state);
  if (state !== JobState.JOB_STATE_UNSPECIFIED) writer.uint32(160).int32(state);
  if (job.attempt !== 0) writer.uint32(168).int32(job.attempt);
  writeTimestamp(writer, 178, job.createdAt);
  writeTimestamp(writer, 186, job.enqueuedAt);
  writeTimestamp(writer, 194, job.startedAt);
  writeTimestamp(writer, 202, job.completedAt);
  if (job.error !== undefined) JobError.encode(toProtoJobError(job.error), writer.uint32(210).fork()).join();
  for (const error of job.errors) JobError.encode(toProtoJobError(error), writer.uint32(218).fork()).join();
  if (job.result !== undefined) writeValue(writer.uint32(226).fork(), job.result).join();
  writeTimestamp(writer, 234, job.nextRetryAt);
  if (job.lease !== undefined && job.lease.workerId !== '') writer.uint32(242).string(job.lease.workerId);
  if (job.deadLetter) writer.uint32(248).bool(true);
  if (job.progress !== undefined) writer.uint32(257).double(job.progress);
  if (job.progressData !== undefined) writeStruct(writer.uint32(266).fork(), job.progressData).join();
  if (job.lastCheckpoint !== undefined) writeValue(writer.uint32(274).fork(), job.lastCheckpoint).join();
  if (job.workflow !== undefined) {
    if (job.workflow.id !== '') writer.uint32(282).string(job.workflow.id);
    if (job.workflow.step !== '') writer.uint32(290).string(job.workflow.step);
  }
  if (parentResults !== undefined) writeStruct(writer.uint32(298).fork(), parentResults).join();
  return writer;
}

/**
 * A claimed job as Delivery bytes: the job's envelope, its lease token and
 * when the lease lapses. A workflow job carries its parent_results, `{}`
 * when it runs after nothing.
 */
export function writeDelivery(writer: BinaryWriter, job: Job): BinaryWriter {
  const parentResults = job.workflow === undefined ? undefined : (job.parentResults ?? {});
  writeJob(writer.uint32(10).fork(), job, parentResults).join();
  if (job.lease!.token !== '') writer.uint32(18).string(job.lease!.token);
  writeTimestamp(writer, 26, visibilityDeadline(job));
  return writer;
}

/** The default retry policy's bytes: most jobs carry it, and it never changes. */
const DEFAULT_RETRY_POLICY_BYTES = RetryPolicy.encode(DEFAULT_PROTO_RETRY_POLICY).finish();

function writeSeconds(writer: BinaryWriter, key: number, ms: number | undefined): void {
  const value = seconds(ms);
  if (value !== 0) writer.uint32(key).int32(value);
}

const MAX_UINT32 = 0xffff_ffff;

/** A google.protobuf.Timestamp field at `key`, from milliseconds (absent: none). */
function writeTimestamp(writer: BinaryWriter, key: number, ms: number | undefined): void {
  if (ms === undefined) return;
  const wholeSeconds = Math.trunc(ms / 1_000);
  const nanos = (ms % 1_000) * 1_000_000;
  writer.uint32(key).fork();
  // A positive int64 below 2^32 is the same varint as a uint32, which skips int64's BigInt and its {lo, hi} (times up to 2106).
  if (wholeSeconds > 0 && wholeSeconds <= MAX_UINT32) writer.uint32(8).uint32(wholeSeconds);
  else if (wholeSeconds !== 0) writer.uint32(8).int64(wholeSeconds);
  if (nanos !== 0) writer.uint32(16).int32(nanos);
  writer.join();
}

/** A google.protobuf.Value (JSON value) message's fields. */
function writeValue(writer: BinaryWriter, value: JsonValue): BinaryWriter {
  if (value === null) return writer.uint32(8).int32(0);
  if (typeof value === 'boolean') return writer.uint32(32).bool(value);
  if (typeof value === 'number') return writer.uint32(17).double(value);
  if (typeof value === 'string') return writer.uint32(26).string(value);
  if (Array.isArray(value)) {
    writer.uint32(50).fork();
    for (const item of value) writeValue(writer.uint32(10).fork(), item).join();
    return writer.join();
  }
  return writeStruct(writer.uint32(42).fork(), value).join();
}

/** A google.protobuf.Struct (JSON object) message's fields. */
function writeStruct(writer: BinaryWriter, object: JsonObject): BinaryWriter {
  for (const key of Object.keys(object)) {
    writer.uint32(10).fork();
    if (key !== '') writer.uint32(10).string(key);
    writeValue(writer.uint32(18).fork(), object[key]!).join();
    writer.join();
  }
  return writer;
}
