import type { JobEvent } from '../../domain/job-event';
import type { WorkerState } from '../../domain/worker';
import type { PublishedSignal, StoreSignal } from '../store-signal';

/**
 * A signal on the channel: cjson-encoded with one-letter keys when a script
 * publishes it (see lua/lib/ojs.lua); JSON from {@link encodeSignal} when
 * the application does.
 */
type WireSignal =
  | { k: 'a'; q: string; n: number }
  | { k: 'c'; w: string; n: number }
  | { k: 'd'; w: string; s: WorkerState }
  | { k: 'x'; w: string; j: string[] }
  | { k: 'r'; w: string }
  | { k: 't'; w: string; j: string[] }
  | { k: 'g'; w: string; j: string[] }
  | { k: 'e'; e: JobEvent };

/** The StoreSignal a published message carries, or undefined for one this server does not know. */
export function decodeSignal(message: string): StoreSignal | undefined {
  const wire = JSON.parse(message) as WireSignal;
  switch (wire.k) {
    case 'a':
      return { kind: 'jobsAvailable', queue: wire.q, count: wire.n };
    case 'c':
      return { kind: 'capacityFreed', workerId: wire.w, count: wire.n };
    case 'd':
      return { kind: 'workerDirected', workerId: wire.w, state: wire.s };
    case 'x':
      return { kind: 'jobsCancelled', workerId: wire.w, jobIds: wire.j };
    case 'r':
      return { kind: 'workerRemoved', workerId: wire.w };
    case 't':
      return { kind: 'jobsTimedOut', workerId: wire.w, jobIds: wire.j };
    case 'g':
      return { kind: 'jobsReclaimed', workerId: wire.w, jobIds: wire.j };
    case 'e':
      return { kind: 'event', event: wire.e };
    default:
      return undefined;
  }
}

/** The message for a signal the application publishes. */
export function encodeSignal(signal: PublishedSignal): string {
  switch (signal.kind) {
    case 'jobsTimedOut':
      return JSON.stringify({ k: 't', w: signal.workerId, j: signal.jobIds } satisfies WireSignal);
    case 'jobsReclaimed':
      return JSON.stringify({ k: 'g', w: signal.workerId, j: signal.jobIds } satisfies WireSignal);
    case 'event':
      return JSON.stringify({ k: 'e', e: signal.event } satisfies WireSignal);
  }
}
