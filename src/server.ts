import type { Meter, Tracer } from '@opentelemetry/api';
import type { ConnectionPolicy } from '../lib/connection-policy';
import { pause } from '../lib/pause';
import type { ProtocolSettings } from './app/app-context';
import { createApplication, type Application } from './app/application';
import type { Entropy, Logger } from './app/ports';
import { Maintenance, type MaintenanceIntervals } from './background/maintenance';
import type { Clock } from './domain/clock';
import type { PayloadLimits } from './domain/limits';
import type { PrincipalLimits } from './domain/principal-limits';
import type { RetentionPolicy } from './domain/retention';
import type { JobStore } from './store/job-store';
import { OtelTelemetry } from './telemetry/otel-telemetry';
import { startGrpcServer, type GrpcServer } from './transport/grpc/grpc-server';
import type { SecurityOptions } from './transport/grpc/server-security';
import { startDashboardServer, type DashboardServer } from './transport/http/dashboard-server';

export interface ServerOptions {
  host: string;
  port: number;
  store: JobStore;
  clock: Clock;
  entropy: Entropy;
  tracer: Tracer;
  meter: Meter;
  /**
   * Whether the tracer or the meter exports anything (an SDK was started);
   * true without. When neither does, telemetry reads no job transition,
   * and a settlement's is never decoded (OtelTelemetry).
   */
  exportsTelemetry?: boolean;
  logger: Logger;
  protocol: ProtocolSettings;
  limits: PayloadLimits;
  retention: RetentionPolicy;
  maintenance: MaintenanceIntervals;
  /** This deployment's name in event sources (ojs://<service>/...). */
  service: string;
  descriptorSet: Uint8Array;
  serverVersion: string;
  /** TLS and the auth file; plaintext and ANONYMOUS callers without. */
  security?: SecurityOptions;
  /** Maximum connection age and ping policing; the defaults without. */
  connections?: ConnectionPolicy;
  /** What one principal may hold and how fast it may enqueue; DEFAULT_PRINCIPAL_LIMITS without. */
  principalLimits?: PrincipalLimits;
  /** A plaintext port serving health only, for probes that cannot speak TLS; none without. 0 picks a free port. */
  healthPort?: number;
  /** The web dashboard's HTTP port, on `host` (0 picks a free one); no dashboard without. */
  dashboardPort?: number;
  /** Start the background loops; tests that drive time by hand call `maintenance.runOnce()` instead. */
  runMaintenance: boolean;
}

export interface RunningServer {
  readonly port: number;
  readonly app: Application;
  readonly maintenance: Maintenance;
  readonly grpc: GrpcServer;
  /** The web dashboard, when it was asked for. */
  readonly dashboard?: DashboardServer;
  /**
   * Stops in order: health NOT_SERVING and calls drained, loops stopped, store closed; within `timeoutMs`
   * (and a moment for the closing) even when the store answers nothing.
   */
  stop(timeoutMs: number): Promise<void>;
}

/** Wires the application over a store and serves it over gRPC. */
export async function startServer(options: ServerOptions): Promise<RunningServer> {
  const telemetry = new OtelTelemetry(options.tracer, options.meter, options.exportsTelemetry ?? true);
  const app = createApplication({
    store: options.store,
    clock: options.clock,
    settings: options.protocol,
    limits: options.limits,
    service: options.service,
    retention: options.retention,
    entropy: options.entropy,
    telemetry,
    logger: options.logger,
  });
  telemetry.observeHeartbeatAges(() => app.recovery.heartbeatAges());
  telemetry.observeQueueCounts(() => app.queues.countsForMetrics());
  const maintenance = new Maintenance(app, options.maintenance);
  const grpc = await startGrpcServer(app, {
    host: options.host,
    port: options.port,
    descriptorSet: options.descriptorSet,
    serverVersion: options.serverVersion,
    security: options.security,
    connections: options.connections,
    principalLimits: options.principalLimits,
    healthPort: options.healthPort,
  });
  const dashboard =
    options.dashboardPort === undefined
      ? undefined
      : await startDashboardServer(app, { host: options.host, port: options.dashboardPort, security: options.security }).catch(
          async (error: unknown) => {
            await grpc.shutdown(0);
            throw error;
          },
        );
  // The standard health service follows the store: NOT_SERVING while it is unreachable.
  options.store.subscribe((signal) => {
    if (signal.kind === 'availability') grpc.setServing(signal.isAvailable);
  });
  if (options.runMaintenance) maintenance.start();
  return {
    port: grpc.port,
    app,
    maintenance,
    grpc,
    ...(dashboard === undefined ? {} : { dashboard }),
    async stop(timeoutMs: number): Promise<void> {
      // One deadline for the whole stop, whatever the store does meanwhile.
      const stopped = new AbortController();
      const deadline = pause(timeoutMs, stopped.signal);
      await Promise.all([grpc.shutdown(timeoutMs), dashboard?.close(timeoutMs)]);
      // A background pass waiting on a store that answers nothing (each call may wait the command timeout) gets
      // what is left of the timeout; closing the store then fails its call. A pass cut short loses nothing: each
      // store call is atomic, passes are idempotent, and a job it did not get to is recovered by the next one.
      await Promise.race([maintenance.stop(), deadline]);
      stopped.abort();
      app.streams.stop();
      app.owners.stop();
      await options.store.close();
    },
  };
}
