import type { JobTransition } from '../../../domain/transition';
import { declareScript } from '../script';
import { decodeTransitions } from '../fact-codec';
import { timedPassArgs, type TimedPass } from './timed-pass';

/** Scheduled and retryable jobs whose time has come -> available (lua/promote-due.lua). */
export const promoteDueScript = declareScript({
  name: 'promote-due',
  encode: (params: TimedPass) => timedPassArgs(params),
  decode: (reply): JobTransition[] => decodeTransitions(reply),
});
