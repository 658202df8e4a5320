import type { DirectParams } from '../../job-store';
import { readOneOf, readStatus } from '../reply';
import { arg, declareScript } from '../script';
import { refusalError } from '../script-errors';
import { stateChangeArgs } from './state-change';

/** Applies an operator directive the domain decided, if the worker did not change meanwhile (lua/direct-worker.lua). */
export const directWorkerScript = declareScript({
  name: 'direct-worker',
  encode: (params: DirectParams) => [arg.id(params.workerId, 'worker id'), ...stateChangeArgs(params)],
  decode(reply, params): 'applied' | 'conflict' {
    const { status } = readStatus(reply, 'direct-worker');
    if (status === 'not_found') throw refusalError({ status, workerId: params.workerId });
    return readOneOf(status, ['applied', 'conflict'] as const, 'directive result');
  },
});
