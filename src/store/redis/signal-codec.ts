import { OjsError } from '../../domain/errors';
import type { HeartbeatNotice, RenewedLease } from '../../domain/event-facts';
import type { JsonObject, JsonValue } from '../../domain/json';
import { NEXT_WORKER_STATES } from '../../domain/worker';
import type { PublishedSignal, StoreSignal } from '../store-signal';
import { readInteger, readJson, readJsonArray, readJsonObject, readKeyOf, readString } from './reply';

/**
 * Messages on the pub/sub channels. A signal is cjson-encoded with
 * one-letter keys when a script publishes it (see lua/lib/ojs.lua); JSON
 * from {@link encodeSignal} when the application does. Keys: k (kind),
 * q (queue), n (count), w (worker), s (state), j (job ids), a (a time, as
 * text). A heartbeat
 * notice (lib publishHeartbeat; a message holds one, or a list of them)
 * has w, a (at), s (the worker's state, for a beat), j (the renewed
 * leases, absent for none: {job id, type, queue, attempt, lapses at}
 * each); its numbers are strings, which cjson never rounds.
 */

/** The message of another version or another program: not for this server. */
function ignoringForeign<T>(read: () => T): T | undefined {
  try {
    return read();
  } catch (error) {
    if (error instanceof OjsError) return undefined;
    throw error;
  }
}

function readMessage(message: string, what: string): JsonObject {
  return readJsonObject(readJson(message, what), what);
}

function readJobIds(value: JsonValue | undefined, what: string): string[] {
  return readJsonArray(value, what).map((id, i) => readString(id, `${what}[${i}]`));
}

/** The StoreSignal a published message carries, or undefined for one this server does not read. */
export function decodeSignal(message: string): StoreSignal | undefined {
  return ignoringForeign(() => readSignal(readMessage(message, 'signal')));
}

function readSignal(wire: JsonObject): StoreSignal | undefined {
  const worker = (): string => readString(wire['w'], 'signal worker');
  const jobIds = (): string[] => readJobIds(wire['j'], 'signal job ids');
  switch (readString(wire['k'], 'signal kind')) {
    case 'a':
      return { kind: 'jobsAvailable', queue: readString(wire['q'], 'signal queue'), count: readInteger(wire['n'], 'signal count') };
    case 'c':
      return { kind: 'capacityFreed', workerId: worker(), count: readInteger(wire['n'], 'signal count') };
    case 'd':
      return { kind: 'workerDirected', workerId: worker(), state: readKeyOf(wire['s'], NEXT_WORKER_STATES, 'signal state') };
    case 'x':
      return { kind: 'jobsCancelled', workerId: worker(), jobIds: jobIds() };
    case 'r':
      return { kind: 'workerRemoved', workerId: worker() };
    case 'u':
      return { kind: 'dueAt', at: readInteger(wire['a'], 'signal due time') };
    case 'n':
      return { kind: 'scheduleDueAt', at: readInteger(wire['a'], 'signal tick time') };
    case 't':
      return { kind: 'jobsTimedOut', workerId: worker(), jobIds: jobIds() };
    case 'g':
      return { kind: 'jobsReclaimed', workerId: worker(), jobIds: jobIds() };
    default:
      return undefined;
  }
}

/** The message for a signal the application publishes. */
export function encodeSignal(signal: PublishedSignal): string {
  switch (signal.kind) {
    case 'jobsTimedOut':
      return JSON.stringify({ k: 't', w: signal.workerId, j: signal.jobIds });
    case 'jobsReclaimed':
      return JSON.stringify({ k: 'g', w: signal.workerId, j: signal.jobIds });
  }
  const unknownSignal: never = signal;
  throw new Error(`unknown signal ${JSON.stringify(unknownSignal)}`);
}

/**
 * The notices a heartbeat message carries: one, or the list of one script
 * call's (lib finish publishes them together); none for a message this
 * server does not read.
 */
export function decodeHeartbeats(message: string): HeartbeatNotice[] {
  return (
    ignoringForeign(() => {
      const wire = readJson(message, 'heartbeat');
      return Array.isArray(wire) ? wire.map(readHeartbeat) : [readHeartbeat(wire)];
    }) ?? []
  );
}

function readHeartbeat(value: JsonValue): HeartbeatNotice {
  const wire = readJsonObject(value, 'heartbeat');
  const notice: HeartbeatNotice = {
    at: readInteger(wire['a'], 'heartbeat at'),
    workerId: readString(wire['w'], 'heartbeat worker'),
    jobs: wire['j'] === undefined ? [] : readJsonArray(wire['j'], 'heartbeat leases').map(readRenewedLease),
  };
  if (wire['s'] !== undefined) notice.state = readKeyOf(wire['s'], NEXT_WORKER_STATES, 'heartbeat state');
  return notice;
}

function readRenewedLease(value: JsonValue): RenewedLease {
  const [jobId, jobType, queue, attempt, visibleUntil] = readJsonArray(value, 'heartbeat lease');
  return {
    jobId: readString(jobId, 'heartbeat job id'),
    jobType: readString(jobType, 'heartbeat job type'),
    queue: readString(queue, 'heartbeat queue'),
    attempt: readInteger(attempt, 'heartbeat attempt'),
    visibleUntil: readInteger(visibleUntil, 'heartbeat lease expiry'),
  };
}
