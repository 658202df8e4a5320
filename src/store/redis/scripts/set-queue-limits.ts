import type { QueueLimitsParams } from '../../job-store';
import { readInteger } from '../reply';
import { arg, declareScript } from '../script';

/** Sets or clears a queue's fleet-wide limits (lua/set-queue-limits.lua). */
export const setQueueLimitsScript = declareScript({
  name: 'set-queue-limits',
  encode: ({ queue, limits, now }: QueueLimitsParams) => [
    arg.id(queue, 'queue'),
    arg.optionalInt(limits?.maxActive, 'maxActive'),
    arg.optionalInt(limits?.rate?.limit, 'rate limit'),
    arg.optionalInt(limits?.rate?.periodMs, 'rate period'),
    arg.int(now, 'now'),
  ],
  decode: (reply): void => {
    readInteger(reply, 'limits set');
  },
});
