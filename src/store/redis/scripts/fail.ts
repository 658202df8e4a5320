import type { FailParams, SettlementOutcome } from '../../job-store';
import { appendBatch, arg, declareScript } from '../script';
import { OUTCOME_FIELDS, outcomeFields, readSettlements } from './outcome-items';

/** Applies decided failure outcomes to jobs whose lease the worker holds (lua/fail.lua). */
export const failScript = declareScript({
  name: 'fail',
  encode: (params: FailParams) =>
    appendBatch([arg.int(params.now, 'now'), arg.id(params.workerId, 'worker id')], OUTCOME_FIELDS, params.items, outcomeFields),
  decode(reply, params): SettlementOutcome[] {
    return readSettlements(reply, params.items, 'fail').map((settled, i) => {
      const { outcome } = params.items[i]!;
      if (settled.ok && outcome.state === 'retryable') settled.nextRetryAt = outcome.nextRetryAt;
      return settled;
    });
  },
});
