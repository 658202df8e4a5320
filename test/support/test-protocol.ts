import type { ProtocolSettings } from '../../src/app/app-context';

/** Short but realistic protocol timings for tests. */
export const TEST_PROTOCOL: Readonly<ProtocolSettings> = Object.freeze({
  heartbeatIntervalMs: 1_000,
  heartbeatTimeoutMs: 3_000,
  visibilityTimeoutMs: 60_000,
  jobTimeoutMs: 60_000,
  jobGracePeriodMs: 30_000,
  jobHeartbeatTimeoutMs: 60_000,
  streamKeepaliveMs: 60_000,
});
