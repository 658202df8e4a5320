import { desiredState } from '../../../domain/worker';
import type { WorkerStateFields } from '../../job-store';
import { arg, type ScriptArg } from '../script';

/**
 * A compare-and-set of a worker's state as lib/workers.lua argStateChange reads
 * it (record-beat, direct-worker): expected state and directive, then the
 * next state, directive and desired state ('' for no directive).
 */
export function stateChangeArgs(change: { expected: WorkerStateFields; next: WorkerStateFields }): ScriptArg[] {
  const { expected, next } = change;
  return [
    arg.id(expected.state, 'expected state'),
    arg.text(expected.directive ?? '', 'expected directive'),
    arg.id(next.state, 'next state'),
    arg.text(next.directive ?? '', 'next directive'),
    arg.id(desiredState(next), 'desired state'),
  ];
}
