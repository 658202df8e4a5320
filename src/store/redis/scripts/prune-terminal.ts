import type { RetentionPolicy } from '../../../domain/retention';
import { readInteger } from '../reply';
import { arg, declareScript } from '../script';

/** Removes finished jobs past their retention, oldest first; returns how many (lua/prune-terminal.lua). */
export const pruneTerminalScript = declareScript({
  name: 'prune-terminal',
  encode: ({ now, retention, limit }: { now: number; retention: RetentionPolicy; limit: number }) => [
    arg.int(now, 'now'),
    arg.int(retention.completedMs, 'completed retention'),
    arg.int(retention.cancelledMs, 'cancelled retention'),
    arg.int(retention.discardedMs, 'discarded retention'),
    arg.int(retention.maxJobs, 'maxJobs'),
    arg.int(limit, 'limit'),
  ],
  decode: (reply): number => readInteger(reply, 'pruned'),
});
