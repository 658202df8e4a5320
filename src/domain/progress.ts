import { invalidRequest, type FieldViolation } from './errors';
import type { JsonObject, JsonValue } from './json';

/** A progress report for an active job (ojs-progress sections 5-6). */
export interface ProgressUpdate {
  progress?: number;
  data?: JsonObject;
  checkpoint?: JsonValue;
}

/** ojs-progress 5.2 recommends small progress data; checkpoints carry resumable state. */
export const PROGRESS_DATA_MAX_BYTES = 4 * 1024;
export const CHECKPOINT_MAX_BYTES = 64 * 1024;

/**
 * Validates an update and clamps its progress to 0..1 (ojs-progress 5.1).
 * At least one of progress, data and checkpoint must be present.
 */
export function checkProgressUpdate(update: ProgressUpdate): ProgressUpdate {
  const violations: FieldViolation[] = [];
  if (update.progress === undefined && update.data === undefined && update.checkpoint === undefined) {
    violations.push({ field: 'progress', description: 'at least one of progress, data and checkpoint is required' });
  }
  if (update.progress !== undefined && !Number.isFinite(update.progress))
    violations.push({ field: 'progress', description: 'must be a number' });
  if (update.data !== undefined && jsonBytes(update.data) > PROGRESS_DATA_MAX_BYTES) {
    violations.push({ field: 'data', description: `must be at most ${PROGRESS_DATA_MAX_BYTES} bytes as JSON` });
  }
  if (update.checkpoint !== undefined && jsonBytes(update.checkpoint) > CHECKPOINT_MAX_BYTES) {
    violations.push({ field: 'checkpoint', description: `must be at most ${CHECKPOINT_MAX_BYTES} bytes as JSON` });
  }
  const first = violations[0];
  if (first !== undefined) throw invalidRequest(first.field, first.description);
  const checked: ProgressUpdate = { ...update };
  if (update.progress !== undefined) checked.progress = Math.min(1, Math.max(0, update.progress));
  return checked;
}

const encoder = new TextEncoder();

function jsonBytes(value: JsonValue): number {
  return encoder.encode(JSON.stringify(value)).length;
}
