/**
 * How much of the server one principal may hold at once, and how fast it
 * may enqueue (ojs-security 10: one tenant must not starve the others). The
 * limits apply to principals of the auth file; without authentication every
 * caller is the one anonymous principal, and a shared cap would let any
 * client starve the rest, so only the per-connection bound applies then.
 * 0 turns a limit off.
 */
export interface PrincipalLimits {
  /** Long-lived calls in flight: Fetch, Beat and WatchEvents streams and WaitForJob long polls. */
  maxStreams: number;
  /** Open connections (HTTP/2 sessions) that carried a call of the principal. */
  maxConnections: number;
  /** Jobs a second the principal may enqueue, on average. */
  enqueueRatePerSecond: number;
  /** Jobs it may enqueue at once (the token bucket's size); 0: one second's worth of the rate. */
  enqueueBurst: number;
}

export const DEFAULT_PRINCIPAL_LIMITS: PrincipalLimits = {
  maxStreams: 10_000,
  maxConnections: 1_000,
  enqueueRatePerSecond: 0,
  enqueueBurst: 0,
};
