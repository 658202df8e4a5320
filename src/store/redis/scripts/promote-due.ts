import type { PromotionPass } from '../../job-store';
import { declareScript } from '../script';
import { decodeTransitions } from '../fact-codec';
import { readArray, readOptionalInteger } from '../reply';
import { timedPassArgs, type TimedPass } from './timed-pass';

/** Scheduled and retryable jobs whose time has come -> available, and when the next one falls due (lua/promote-due.lua). */
export const promoteDueScript = declareScript({
  name: 'promote-due',
  encode: (params: TimedPass) => timedPassArgs(params),
  decode(reply): PromotionPass {
    const [transitions, nextDueAt] = readArray(reply, 'promote-due');
    return {
      transitions: decodeTransitions(transitions),
      nextDueAt: readOptionalInteger(nextDueAt, 'promote-due next due time'),
    };
  },
});
