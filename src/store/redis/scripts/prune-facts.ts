import { readInteger } from '../reply';
import { arg, declareScript } from '../script';

/** Drops the facts older than the log's retention age; returns about how many (lua/prune-facts.lua). */
export const pruneFactsScript = declareScript({
  name: 'prune-facts',
  encode: (params: { now: number; maxAgeMs: number }) => [arg.int(params.now, 'now'), arg.int(params.maxAgeMs, 'maxAgeMs')],
  decode: (reply): number => readInteger(reply, 'pruned facts'),
});
