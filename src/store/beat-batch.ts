import { OjsError, workerNotFound } from '../domain/errors';
import { MAX_BEATS_PER_CALL, type BeatOutcome, type RecordedBeat } from './job-store';

/**
 * What every store refuses of a recordBeats batch: an empty one, or one
 * over MAX_BEATS_PER_CALL (the caller splits larger ones). A bug, never a
 * client's doing: refused before anything is written.
 */
export function assertBeatBatchSize(count: number): void {
  if (count < 1 || count > MAX_BEATS_PER_CALL) {
    throw new OjsError('backend_error', `a recordBeats call takes 1 to ${MAX_BEATS_PER_CALL} beats, not ${count}`);
  }
}

/** A beat of a batch as its caller answers it: an unregistered worker is NOT_FOUND. */
export function beatOutcomeOf(recorded: RecordedBeat, workerId: string): BeatOutcome {
  if (recorded.result === 'not_found') throw workerNotFound(workerId);
  return recorded;
}
