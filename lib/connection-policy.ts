/**
 * How the server treats its HTTP/2 connections, whatever they carry.
 * Durations in milliseconds; 0 turns a rule off.
 */
export interface ConnectionPolicy {
  /**
   * Age after which a connection is told to go away (GOAWAY, no new streams;
   * ±10% jitter), so that clients reconnect and spread over replicas added
   * since. 0: connections live as long as their peers keep them.
   */
  maxAgeMs: number;
  /** Time the streams of an aged connection get to end before it is closed under them. */
  maxAgeGraceMs: number;
  /**
   * Pings a client may send no closer together unless the server sent it
   * something in between; a connection that breaks this three times is closed
   * with GOAWAY ENHANCE_YOUR_CALM "too_many_pings". 0: no policing.
   */
  minPingIntervalMs: number;
  /**
   * Calls one connection may carry at once, announced in the HTTP/2
   * SETTINGS_MAX_CONCURRENT_STREAMS: gRPC clients hold further calls until
   * one ends, and a peer that opens more anyway has them refused
   * (RST_STREAM REFUSED_STREAM). 0: no limit.
   */
  maxStreams: number;
}

export const DEFAULT_CONNECTION_POLICY: ConnectionPolicy = {
  maxAgeMs: 0,
  maxAgeGraceMs: 30_000,
  minPingIntervalMs: 5_000,
  maxStreams: 1_000,
};
