import { throughputMinutes } from '../../../domain/throughput';
import type { MinuteCounts, QueueStats } from '../../job-store';
import { readArray, readInteger, unexpectedReply } from '../reply';
import { arg, declareScript } from '../script';
import { readQueueSummary } from './replies';

/** A minute's count as HMGET returns it: nil (null) where nothing was counted. */
function readCount(value: unknown, what: string): number {
  return value === null ? 0 : readInteger(value, what);
}

/** One queue's counts, pause and throughput over the last hour (lua/queue-stats.lua). */
export const queueStatsScript = declareScript({
  name: 'queue-stats',
  isReadOnly: true,
  encode: (params: { queue: string; now: number }) => [arg.int(params.now, 'now'), arg.id(params.queue, 'queue')],
  decode(reply, params): QueueStats {
    const [summary, counted] = readArray(reply, 'queue stats');
    const minutes = throughputMinutes(params.now);
    const rows = readArray(counted, 'queue minutes');
    if (rows.length !== minutes.length) unexpectedReply('queue minutes (one per minute)', counted);
    return {
      counts: readQueueSummary(summary),
      minutes: rows.map((row, i): MinuteCounts => {
        const [completed, failed, discarded] = readArray(row, 'queue minute');
        return {
          minute: minutes[i]!,
          completed: readCount(completed, 'completed'),
          failed: readCount(failed, 'failed'),
          discarded: readCount(discarded, 'discarded'),
        };
      }),
    };
  },
});
