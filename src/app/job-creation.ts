import { sha256Hex } from '../../lib/sha256';
import type { JobCreation } from '../domain/job-submission';
import type { AppContext } from './app-context';

/**
 * How this server builds jobs at `now` (enqueued, made by a schedule, or
 * created with a workflow): its defaults and limits, ids from its entropy
 * unless `newId` says otherwise.
 */
export function jobCreation(ctx: AppContext, now: number, options: { pending?: boolean; newId?: () => string } = {}): JobCreation {
  const { settings, limits, entropy } = ctx;
  return {
    now,
    newId: options.newId ?? (() => entropy.newJobId()),
    digest: sha256Hex,
    defaults: {
      timeoutMs: settings.jobTimeoutMs,
      visibilityTimeoutMs: settings.visibilityTimeoutMs,
      gracePeriodMs: settings.jobGracePeriodMs,
      heartbeatTimeoutMs: settings.jobHeartbeatTimeoutMs,
    },
    limits,
    pending: options.pending ?? false,
  };
}
