import { NEXT_WORKER_STATES } from '../../../domain/worker';
import { assertBeatBatchSize } from '../../beat-batch';
import type { BeatParams, RecordedBeat } from '../../job-store';
import { FIELD_SEPARATOR } from '../fact-codec';
import { readArray, readKeyOf, readOneOf, readString, unexpectedReply } from '../reply';
import { arg, declareScript, type ScriptArg } from '../script';
import { stateChangeArgs } from './state-change';

const BEAT_RESULTS = ['applied', 'stale', 'conflict'] as const satisfies readonly RecordedBeat['result'][];

/**
 * Records workers' beats, each with the state the domain decided for it
 * (lua/record-beat.lua): one call for up to MAX_BEATS_PER_CALL beats (its
 * Lua twin MAX_BEATS), so
 * that a replica's many workers do not each cost Redis a script call.
 */
export const recordBeatScript = declareScript({
  name: 'record-beat',
  encode(beats: readonly BeatParams[]): ScriptArg[] {
    assertBeatBatchSize(beats.length);
    const args: ScriptArg[] = [beats.length];
    // One push per value: a batch is large, and spreading it into a call would overflow the stack.
    for (const beat of beats) {
      args.push(arg.int(beat.now, 'now'), arg.id(beat.workerId, 'worker id'), arg.int(beat.sequence, 'sequence'));
      for (const value of stateChangeArgs(beat)) args.push(value);
      args.push(JSON.stringify(beat.activeJobIds), arg.int(beat.activeJobIds.length, 'listed job count'));
      for (const jobId of beat.activeJobIds) args.push(arg.id(jobId, 'active job id'));
    }
    return args;
  },
  decode(reply: unknown, beats: readonly BeatParams[]): RecordedBeat[] {
    const replies = readArray(reply, 'record-beat');
    if (replies.length !== beats.length * BEAT_REPLY_STRIDE)
      unexpectedReply(`record-beat (five elements per beat, ${beats.length} beats)`, reply);
    return beats.map((_, b) => decodeBeat(replies, b * BEAT_REPLY_STRIDE));
  },
});

/** Elements of record-beat.lua's reply per beat: status, desired state, cancelled, timed-out and reclaimed job ids. */
const BEAT_REPLY_STRIDE = 5;

/** The beat whose reply starts at `at` (read in place: a replica decodes thousands of beats a second). */
function decodeBeat(replies: readonly unknown[], at: number): RecordedBeat {
  const status = replies[at];
  if (status === 'not_found') return { result: 'not_found' };
  const result = readOneOf(status, BEAT_RESULTS, 'beat result');
  const isApplied = result === 'applied';
  return {
    result,
    desiredState: readKeyOf(replies[at + 1], NEXT_WORKER_STATES, 'desired state'),
    cancelledJobIds: isApplied ? readJobIds(replies[at + 2], 'cancelled job ids') : [],
    timedOutJobIds: isApplied ? readJobIds(replies[at + 3], 'timed-out job ids') : [],
    reclaimedJobIds: isApplied ? readJobIds(replies[at + 4], 'reclaimed job ids') : [],
  };
}

/** Job ids as record-beat.lua joins them into one element ('' for none). */
function readJobIds(value: unknown, what: string): string[] {
  const text = readString(value, what);
  return text === '' ? [] : text.split(FIELD_SEPARATOR);
}
