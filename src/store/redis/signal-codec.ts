import type { WorkerState } from '../../domain/worker';
import type { StoreSignal } from '../store-signal';

/** A signal as scripts publish it (cjson-encoded, one-letter keys: see lua/lib/ojs.lua). */
type WireSignal =
  | { k: 'a'; q: string; n: number }
  | { k: 'c'; w: string; n: number }
  | { k: 'd'; w: string; s: WorkerState }
  | { k: 'x'; w: string; j: string[] }
  | { k: 'r'; w: string };

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
    default:
      return undefined;
  }
}
