import type { AckParams, SettlementOutcome } from '../../job-store';
import { appendBatch, arg, declareScript } from '../script';
import { readSettlements } from './outcome-items';

const ACK_FIELDS = ['jobId', 'leaseToken', 'result'] as const;

/** Completes active jobs whose lease the worker holds (lua/ack.lua). */
export const ackScript = declareScript({
  name: 'ack',
  encode: (params: AckParams) =>
    appendBatch([arg.int(params.now, 'now'), arg.id(params.workerId, 'worker id')], ACK_FIELDS, params.items, (item) => ({
      jobId: arg.id(item.jobId, 'job id'),
      leaseToken: arg.id(item.leaseToken, 'lease token'),
      result: arg.json(item.result),
    })),
  decode: (reply, params): SettlementOutcome[] => readSettlements(reply, params.items, 'ack'),
});
