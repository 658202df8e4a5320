import type { ServerHttp2Session } from 'node:http2';
import { composeServerMiddleware } from 'nice-grpc';
import { HealthDefinition, HealthServiceImpl, HealthState } from 'nice-grpc-server-health';
import { DEFAULT_CONNECTION_POLICY, type ConnectionPolicy } from '../../../lib/connection-policy';
import { policePings } from '../../../lib/ping-police';
import type { Application } from '../../app/application';
import { DEFAULT_PRINCIPAL_LIMITS, type PrincipalLimits } from '../../domain/principal-limits';
import { JobServiceDefinition } from '../../../gen/ojs/server/v1/job_service';
import { OperatorServiceDefinition } from '../../../gen/ojs/server/v1/operator_service';
import { ScheduleServiceDefinition } from '../../../gen/ojs/server/v1/schedule_service';
import { WorkerServiceDefinition } from '../../../gen/ojs/server/v1/worker_service';
import { WorkflowServiceDefinition } from '../../../gen/ojs/server/v1/workflow_service';
import { BeatStreams } from './beat-streams';
import { CallGate } from './call-gate';
import { releaseDecodedMessages } from './decoder-release';
import { FetchStreams } from './fetch-streams';
import { guardDecoding } from './guarded-decoding';
import { LIVENESS_SERVICE, startHealthServer } from './health-server';
import { listenWatchingSessions } from './http2-sessions';
import { directEnqueue, JobServiceHandlers } from './job-service';
import { OperatorServiceHandlers } from './operator-service';
import { ScheduleServiceHandlers } from './schedule-service';
import { peerIdentityInterceptor } from './peer-identity';
import { PrincipalUsage } from './principal-usage';
import { reflectionServices } from './reflection';
import { exposureWarning, serverSecurity, type SecurityOptions } from './server-security';
import { ojsServerMiddleware } from './server-middleware';
import { ServiceHost } from './service-host';
import { terminatorMiddleware } from './terminator-middleware';
import { directSettlements, WorkerServiceHandlers } from './worker-service';
import { WorkflowServiceHandlers } from './workflow-service';

export interface GrpcServerOptions {
  host: string;
  /** 0 picks a free port. */
  port: number;
  /** The FileDescriptorSet built by buf from proto/, for reflection. */
  descriptorSet: Uint8Array;
  serverVersion: string;
  /** TLS and principals; plaintext and ANONYMOUS callers without. */
  security?: SecurityOptions;
  /** Maximum connection age and ping policing; DEFAULT_CONNECTION_POLICY without. */
  connections?: ConnectionPolicy;
  /** What one principal may hold and how fast it may enqueue; DEFAULT_PRINCIPAL_LIMITS without. */
  principalLimits?: PrincipalLimits;
  /** A plaintext port serving health only, for probes that cannot speak TLS (health-server.ts); none without. 0 picks a free port. */
  healthPort?: number;
}

/** A listening gRPC server and the controls its owner needs. */
export interface GrpcServer {
  readonly port: number;
  readonly health: HealthState;
  /** The plaintext health-only port; undefined when there is none. */
  readonly healthPort: number | undefined;
  /** Sets the overall and per-service health (unless the server is shutting down). */
  setServing(isServing: boolean): void;
  /**
   * Graceful stop: health turns NOT_SERVING, new calls are refused, streams
   * end with UNAVAILABLE, in-flight unary calls get `timeoutMs` to finish.
   */
  shutdown(timeoutMs: number): Promise<void>;
}

const HEALTH_SERVICE = 'grpc.health.v1.Health';

export async function startGrpcServer(app: Application, options: GrpcServerOptions): Promise<GrpcServer> {
  if (!releaseDecodedMessages()) {
    app.context.logger.debug(
      {},
      "grpc-js's StreamDecoder is not the one decoder-release.ts knows: a message's bytes stay until the next one",
    );
  }
  const terminator = terminatorMiddleware();
  const security = serverSecurity(options.security, app.context.logger);
  const connections = options.connections ?? DEFAULT_CONNECTION_POLICY;
  // The enqueue rate reads the application's clock, so a test's ManualClock drives it.
  const usage = new PrincipalUsage(options.principalLimits ?? DEFAULT_PRINCIPAL_LIMITS, app.context.clock);
  const server = new ServiceHost({
    // Hands the verified client certificate, which only grpc-js sees, to the authentication: only with an auth file
    // does anyone read it (or could a caller's own header of that name pass for it), and each call pays for the layer.
    ...(options.security?.authFile !== undefined && { interceptors: [peerIdentityInterceptor] }),
    // Detect dead peers on idle connections (how often clients may ping us is policed below).
    'grpc.keepalive_time_ms': 30_000,
    'grpc.keepalive_timeout_ms': 10_000,
    // grpc-js sends GOAWAY at the age and closes the connection under its streams after the grace.
    ...(connections.maxAgeMs > 0 && {
      'grpc.max_connection_age_ms': connections.maxAgeMs,
      'grpc.max_connection_age_grace_ms': connections.maxAgeGraceMs,
    }),
    ...(connections.maxStreams > 0 && { 'grpc.max_concurrent_streams': connections.maxStreams }),
  });
  const gate = new CallGate({
    logger: app.context.logger,
    serverVersion: options.serverVersion,
    authenticate: security.authenticate,
    usage,
  });
  const middleware = ojsServerMiddleware(gate);

  const health = HealthState();
  const beatStreams = new BeatStreams(app, gate);
  const workerService = new WorkerServiceHandlers(app);
  server.add(guardDecoding(WorkerServiceDefinition), workerService, middleware, {
    beat: beatStreams.method,
    fetch: new FetchStreams(app, gate).method,
    ...directSettlements(workerService, gate),
  });
  const jobService = new JobServiceHandlers(app);
  server.add(guardDecoding(JobServiceDefinition), jobService, middleware, { enqueue: directEnqueue(jobService, gate) });
  const operatorService = new OperatorServiceHandlers(app);
  server.add(guardDecoding(OperatorServiceDefinition), operatorService, middleware);
  server.add(guardDecoding(ScheduleServiceDefinition), new ScheduleServiceHandlers(app), middleware);
  server.add(guardDecoding(WorkflowServiceDefinition), new WorkflowServiceHandlers(app), middleware);
  // Only the health Watch stream asks to be ended by the terminator: the other calls skip its layer
  // (a generator and an AbortController on each call).
  server.add(guardDecoding(HealthDefinition), HealthServiceImpl(health), composeServerMiddleware(middleware, terminator));
  const ojsServices = [
    WorkerServiceDefinition,
    JobServiceDefinition,
    OperatorServiceDefinition,
    ScheduleServiceDefinition,
    WorkflowServiceDefinition,
  ].map((d) => d.fullName);
  if (options.security?.reflectionAccess !== 'off') {
    for (const { definition, implementation } of reflectionServices(options.descriptorSet, [...ojsServices, HEALTH_SERVICE])) {
      server.add(definition, implementation, middleware);
    }
  }

  // Pings are policed on the monotonic clock of the network, not the application's (a test's ManualClock stands still).
  const policing = (session: ServerHttp2Session): void =>
    policePings(
      session,
      connections.minPingIntervalMs,
      () => performance.now(),
      () => app.context.logger.warn({ peer: session.socket?.remoteAddress }, 'closed a connection that pinged too often (too_many_pings)'),
    );
  const onSession = (session: ServerHttp2Session): void => {
    policing(session);
    usage.watch(session);
  };
  const port = await listenWatchingSessions(() => server.listen(`${options.host}:${options.port}`, security.credentials), onSession).catch(
    (error: unknown) => {
      security.close();
      throw error;
    },
  );
  const warning = exposureWarning(options.host, options.security);
  if (warning !== undefined) app.context.logger.warn({ host: options.host }, warning);
  let isShuttingDown = false;
  const setStatus = (status: 'healthy' | 'unhealthy'): void => {
    health.setStatus(status);
    for (const service of ojsServices) health.setStatus(status, service);
  };
  setStatus('healthy');
  health.setStatus('healthy', LIVENESS_SERVICE);
  const healthServer =
    options.healthPort === undefined
      ? undefined
      : await startHealthServer({
          host: options.host,
          port: options.healthPort,
          health,
          logger: app.context.logger,
          serverVersion: options.serverVersion,
        }).catch((error: unknown) => {
          server.forceShutdown();
          security.close();
          throw error;
        });
  return {
    port,
    healthPort: healthServer?.port,
    health,
    setServing(isServing: boolean): void {
      if (!isShuttingDown) setStatus(isServing ? 'healthy' : 'unhealthy');
    },
    async shutdown(timeoutMs: number): Promise<void> {
      isShuttingDown = true;
      setStatus('unhealthy');
      const drained = server.shutdown();
      beatStreams.endAll();
      app.streams.endAll('server_shutdown');
      operatorService.endStreams();
      // WaitForJob calls answer at once (finished = false): a client asks again, on another replica.
      app.results.endAll();
      terminator.terminate();
      let timer: NodeJS.Timeout | undefined;
      const timedOut = new Promise<'timeout'>((resolve) => {
        timer = setTimeout(() => resolve('timeout'), timeoutMs);
      });
      if ((await Promise.race([drained, timedOut])) === 'timeout') server.forceShutdown();
      clearTimeout(timer);
      security.close();
      // Last: probes see NOT_SERVING (not a refused connection) for as long as the drain lasts.
      healthServer?.stop();
    },
  };
}
