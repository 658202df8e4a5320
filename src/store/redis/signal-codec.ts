import { OjsError } from '../../domain/errors';
import { JOB_EVENT_TYPES, type JobEvent } from '../../domain/job-event';
import type { JsonObject } from '../../domain/json';
import type { TimeoutKind } from '../../domain/timeouts';
import { NEXT_WORKER_STATES } from '../../domain/worker';
import type { PublishedSignal, StoreSignal } from '../store-signal';
import { readInteger, readJson, readJsonArray, readJsonObject, readKeyOf, readNumber, readOneOf, readString } from './reply';

/**
 * A signal on the channel: cjson-encoded with one-letter keys when a script
 * publishes it (see lua/lib/ojs.lua); JSON from {@link encodeSignal} when
 * the application does. Keys: k (kind), q (queue), n (count), w (worker),
 * s (state), j (job ids), e (event).
 */

const TIMEOUT_KINDS: Readonly<Record<TimeoutKind, true>> = { execution: true, total: true, enqueue_ttl: true, stalled: true };

/** The StoreSignal a published message carries, or undefined for one this server does not read. */
export function decodeSignal(message: string): StoreSignal | undefined {
  try {
    return readSignal(readJsonObject(readJson(message, 'signal'), 'signal'));
  } catch (error) {
    // A message of another version or another program: not for this server.
    if (error instanceof OjsError) return undefined;
    throw error;
  }
}

function readSignal(wire: JsonObject): StoreSignal | undefined {
  const worker = (): string => readString(wire['w'], 'signal worker');
  const jobIds = (): string[] => readJsonArray(wire['j'], 'signal job ids').map((id, i) => readString(id, `signal job ids[${i}]`));
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
    case 't':
      return { kind: 'jobsTimedOut', workerId: worker(), jobIds: jobIds() };
    case 'g':
      return { kind: 'jobsReclaimed', workerId: worker(), jobIds: jobIds() };
    case 'e':
      return { kind: 'event', event: readEvent(readJsonObject(wire['e'], 'signal event')) };
    default:
      return undefined;
  }
}

function readEvent(fields: JsonObject): JobEvent {
  const event: JobEvent = {
    type: readOneOf(fields['type'], JOB_EVENT_TYPES, 'event type'),
    at: readNumber(fields['at'], 'event at'),
    jobId: readString(fields['jobId'], 'event jobId'),
    jobType: readString(fields['jobType'], 'event jobType'),
    queue: readString(fields['queue'], 'event queue'),
    attempt: readNumber(fields['attempt'], 'event attempt'),
    timeoutKind: readKeyOf(fields['timeoutKind'], TIMEOUT_KINDS, 'event timeoutKind'),
    limitSeconds: readNumber(fields['limitSeconds'], 'event limitSeconds'),
    elapsedSeconds: readNumber(fields['elapsedSeconds'], 'event elapsedSeconds'),
  };
  if (fields['workerId'] !== undefined) event.workerId = readString(fields['workerId'], 'event workerId');
  return event;
}

/** The message for a signal the application publishes. */
export function encodeSignal(signal: PublishedSignal): string {
  switch (signal.kind) {
    case 'jobsTimedOut':
      return JSON.stringify({ k: 't', w: signal.workerId, j: signal.jobIds });
    case 'jobsReclaimed':
      return JSON.stringify({ k: 'g', w: signal.workerId, j: signal.jobIds });
    case 'event':
      return JSON.stringify({ k: 'e', e: signal.event });
  }
  const unknownSignal: never = signal;
  throw new Error(`unknown signal ${JSON.stringify(unknownSignal)}`);
}
