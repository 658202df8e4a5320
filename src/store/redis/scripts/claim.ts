import type { ClaimParams, ClaimResult } from '../../job-store';
import { decodeClaimedJob } from '../job-codec';
import { readArray, readInteger, readStatus, readString } from '../reply';
import { appendBatch, arg, declareScript } from '../script';
import { refusalError } from '../script-errors';

/** Moves available jobs to active for a worker, within its capacity and a byte budget (lua/claim.lua). */
export const claimScript = declareScript({
  name: 'claim',
  encode: (params: ClaimParams) =>
    appendBatch(
      [
        arg.int(params.now, 'now'),
        arg.id(params.workerId, 'worker id'),
        arg.int(params.max, 'max'),
        arg.id(params.leaseNonce, 'lease nonce'),
        arg.int(params.confirmWithinMs, 'confirmWithinMs'),
        arg.int(params.maxBytes, 'maxBytes'),
      ],
      ['queue'],
      params.queues,
      (queue) => ({ queue: arg.id(queue, 'queue') }),
    ),
  decode(reply, params): ClaimResult {
    const { status, rest } = readStatus(reply, 'claim');
    if (status === 'not_found') throw refusalError({ status, workerId: params.workerId });
    const [isRunning, free, claimed, isFull, heldBack, claimedAt, drained] = rest;
    // Not always params.now: a claim behind a newer logged start starts at it (lua/claim.lua).
    const startedAt = readInteger(claimedAt, 'claim time');
    const heldBackPairs = readArray(heldBack, 'claim held back by rate');
    const heldBackByRate: ClaimResult['heldBackByRate'] = [];
    for (let i = 0; i + 1 < heldBackPairs.length; i += 2) {
      heldBackByRate.push({
        queue: readString(heldBackPairs[i], 'held back queue'),
        opensAt: readInteger(heldBackPairs[i + 1], 'rate window opens at'),
      });
    }
    return {
      heldBackByRate,
      drainedQueues: readArray(drained, 'claim drained queues').map((queue) => readString(queue, 'drained queue')),
      isRunning: readInteger(isRunning, 'claim isRunning') === 1,
      freeCapacity: Math.max(0, readInteger(free, 'claim free capacity')),
      isBudgetSpent: readInteger(isFull, 'claim stopped at the byte budget') === 1,
      jobs: readArray(claimed, 'claimed jobs').map((job) => decodeClaimedJob(job, params.workerId, params.leaseNonce, startedAt)),
    };
  },
});
