import { arg, type ScriptArg } from '../script';

/** The arguments of a pass over a time-ordered index: now, and a limit on what it examines. */
export interface TimedPass {
  now: number;
  limit: number;
}

export function timedPassArgs(params: TimedPass): ScriptArg[] {
  return [arg.int(params.now, 'now'), arg.int(params.limit, 'limit')];
}
