import { ServerCredentials } from '@grpc/grpc-js';
import { createServer } from 'nice-grpc';
import { HealthDefinition, HealthServiceImpl, type HealthState } from 'nice-grpc-server-health';
import type { Logger } from '../../app/ports';
import { guardDecoding } from './guarded-decoding';
import { CallGate } from './call-gate';
import { ojsServerMiddleware } from './server-middleware';

/**
 * The health service name that says whether the process runs, whatever
 * the store: SERVING from start to exit, on both ports. A liveness probe
 * asks for it (Kubernetes restarts a pod whose liveness fails, and
 * restarting every replica does not bring Redis back), while readiness asks
 * for the overall service (""), NOT_SERVING while the store is unreachable.
 * Unlike a TCP check, which the kernel answers for a process whose event
 * loop is stuck, it needs the server to answer.
 */
export const LIVENESS_SERVICE = 'liveness';

export interface HealthServerOptions {
  host: string;
  /** 0 picks a free port. */
  port: number;
  /** The main server's health, which this server answers from. */
  health: HealthState;
  logger: Logger;
  serverVersion: string;
}

/** A listening health-only server. */
export interface HealthServer {
  readonly port: number;
  /** Stops at once: Check answers in no time, and Watch streams never end by themselves. */
  stop(): void;
}

/**
 * A plaintext server of grpc.health.v1.Health only, answering from the
 * main server's `health`: for kubelet's gRPC probes and other checkers that
 * cannot speak TLS while the main port does. It reveals only serving
 * statuses, so it needs no credentials; every other method is UNIMPLEMENTED
 * here, and there is no reflection. Undecodable requests are refused as on
 * the main port (INVALID_ARGUMENT).
 */
export async function startHealthServer(options: HealthServerOptions): Promise<HealthServer> {
  const server = createServer().use(ojsServerMiddleware(new CallGate({ logger: options.logger, serverVersion: options.serverVersion })));
  server.add(guardDecoding(HealthDefinition), HealthServiceImpl(options.health));
  const listeningOn = await server.listen(`${options.host}:${options.port}`, ServerCredentials.createInsecure());
  return {
    port: listeningOn,
    stop(): void {
      server.forceShutdown();
    },
  };
}
