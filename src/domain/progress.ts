import { invalidRequest } from './errors';
import { checkJson, checkJsonObject, type JsonObject, type JsonValue } from './json';
import { CHECKPOINT_MAX_BYTES, PROGRESS_DATA_MAX_BYTES } from './limits';

export { CHECKPOINT_MAX_BYTES, PROGRESS_DATA_MAX_BYTES };

/** A progress report as a worker sends it: data and checkpoint are whatever the decoder produced. */
export interface ProgressInput {
  progress?: number;
  data?: unknown;
  checkpoint?: unknown;
}

/** A checked progress report for an active job (ojs-progress sections 5-6). */
export interface ProgressUpdate {
  progress?: number;
  data?: JsonObject;
  checkpoint?: JsonValue;
}

/**
 * Validates an update and clamps its progress to 0..1 (ojs-progress 5.1).
 * At least one of progress, data and checkpoint must be present; data is a
 * small JSON object, the checkpoint any JSON value within its limit.
 */
export function checkProgressUpdate(input: ProgressInput): ProgressUpdate {
  if (input.progress === undefined && input.data === undefined && input.checkpoint === undefined) {
    throw invalidRequest('progress', 'at least one of progress, data and checkpoint is required');
  }
  const update: ProgressUpdate = {};
  if (input.progress !== undefined) {
    if (!Number.isFinite(input.progress)) throw invalidRequest('progress', 'must be a number');
    update.progress = Math.min(1, Math.max(0, input.progress));
  }
  if (input.data !== undefined) {
    const data = checkJsonObject(input.data);
    if (!data.ok) throw invalidRequest('data', data.problem);
    if (data.bytes > PROGRESS_DATA_MAX_BYTES)
      throw invalidRequest('data', `is ${data.bytes} bytes; at most ${PROGRESS_DATA_MAX_BYTES} are accepted`);
    update.data = data.value;
  }
  if (input.checkpoint !== undefined) {
    const checkpoint = checkJson(input.checkpoint);
    if (!checkpoint.ok) throw invalidRequest('checkpoint', checkpoint.problem);
    if (checkpoint.bytes > CHECKPOINT_MAX_BYTES) {
      throw invalidRequest('checkpoint', `is ${checkpoint.bytes} bytes; at most ${CHECKPOINT_MAX_BYTES} are accepted`);
    }
    update.checkpoint = checkpoint.value;
  }
  return update;
}
