import { pino } from 'pino';
import { systemClock } from './domain/clock';
import { ConfigError, loadConfig, usage, type BackendConfig } from './config/config';
import type { EventRetention } from './domain/retention';
import type { JobStore } from './store/job-store';
import { RedisJobStore } from './store/redis/redis-job-store';
import { loadDescriptorSet } from './descriptor-set';
import { startServer } from './server';
import { MemoryJobStore } from './store/memory/memory-job-store';
import { systemEntropy } from './system-entropy';
import { startTelemetry } from './telemetry/start-telemetry';
import { TelemetrySettingsError } from './telemetry/telemetry-settings';
import { redactedErrorReport, redactSerializedError } from '../lib/redact';

// oxlint-disable-next-line typescript/no-unsafe-type-assertion -- require() returns any; package.json always has a string version
const SERVER_VERSION: string = (require('../../package.json') as { version: string }).version;

/**
 * Composition root: the only place that reads the environment, creates the
 * store and telemetry, handles signals and orders the shutdown.
 */
async function main(): Promise<void> {
  const argv = process.argv.slice(2);
  if (argv.includes('--help')) {
    console.log(usage());
    return;
  }
  const config = loadConfig(process.env, argv);
  // Synchronous writes: the server logs little, and an exit never loses or reorders its last lines.
  const logger = pino(
    {
      level: config.logLevel,
      base: { service: SERVICE_NAME, pid: process.pid },
      timestamp: pino.stdTimeFunctions.isoTime,
      // Every logged error, wherever it comes from, without the password of a URL it may quote.
      serializers: { err: (error: Error) => redactSerializedError(pino.stdSerializers.err(error)) },
    },
    pino.destination({ dest: 1, sync: true }),
  );
  const telemetry = startTelemetry(process.env);
  const store = await openStore(config.backend, config.events, (error) =>
    logger.warn({ err: error }, 'store unreachable at start-up; retrying'),
  );
  const server = await startServer({
    host: config.host,
    port: config.port,
    store,
    clock: systemClock,
    entropy: systemEntropy,
    tracer: telemetry.tracer,
    meter: telemetry.meter,
    exportsTelemetry: telemetry.isExporting,
    logger,
    protocol: config.protocol,
    limits: config.limits,
    retention: config.retention,
    maintenance: config.maintenance,
    // The name telemetry exports under names the deployment in event sources too.
    service: process.env['OTEL_SERVICE_NAME'] || SERVICE_NAME,
    descriptorSet: loadDescriptorSet(),
    serverVersion: SERVER_VERSION,
    security: config.security,
    connections: config.connections,
    principalLimits: config.principalLimits,
    healthPort: config.healthPort,
    dashboardPort: config.dashboardPort,
    runMaintenance: true,
  });
  store.subscribe((signal) => {
    if (signal.kind !== 'availability') return;
    if (signal.isAvailable) logger.info({ backend: config.backend.kind }, 'store reachable again; serving');
    else logger.error({ backend: config.backend.kind }, 'store unreachable; answering UNAVAILABLE and NOT_SERVING until it returns');
  });

  let isStopping = false;
  const stop = (signal: NodeJS.Signals): void => {
    if (isStopping) {
      logger.warn({ signal }, 'second signal: exiting now');
      process.exit(1);
    }
    isStopping = true;
    logger.info({ signal, timeoutMs: config.shutdownTimeoutMs }, 'shutting down');
    // The last resort: whatever holds the stop up past its timeout (a telemetry flush to a collector that
    // answers nothing, a wait nobody bounded), the process ends, as a second signal would end it.
    const overdueAfterMs = config.shutdownTimeoutMs + SHUTDOWN_OVERRUN_MS;
    setTimeout(() => {
      logger.error({ timeoutMs: overdueAfterMs }, 'shutdown did not finish in time: exiting now');
      process.exit(1);
    }, overdueAfterMs);
    server
      .stop(config.shutdownTimeoutMs)
      .then(() => telemetry.shutdown())
      .then(
        () => {
          logger.info({}, 'stopped');
          process.exit(0);
        },
        (error: unknown) => {
          logger.error({ err: error }, 'shutdown failed');
          process.exit(1);
        },
      );
  };
  // Installed before announcing the server, so a signal sent on that announcement is never missed.
  process.on('SIGTERM', stop);
  process.on('SIGINT', stop);
  logger.info(
    {
      host: config.host,
      port: server.port,
      healthPort: server.grpc.healthPort,
      dashboardPort: server.dashboard?.port,
      backend: config.backend.kind,
      version: SERVER_VERSION,
    },
    'ojs server listening',
  );
}

/**
 * What a stop may take beyond the shutdown timeout (closing the store, flushing telemetry) before the
 * process exits anyway; a deployment's termination grace should cover the shutdown timeout and this.
 */
const SHUTDOWN_OVERRUN_MS = 3_000;

/** The server's name in logs, and in event sources unless OTEL_SERVICE_NAME names the deployment. */
const SERVICE_NAME = 'ojs-grpc-server';

/** The configured store; a Redis store waits (up to a timeout) for Redis to answer. */
async function openStore(backend: BackendConfig, events: EventRetention, onWaiting: (error: Error) => void): Promise<JobStore> {
  if (backend.kind === 'memory') return new MemoryJobStore({ maxJobs: backend.maxJobs, maxBytes: backend.maxBytes, events });
  return RedisJobStore.connect({
    url: backend.url,
    prefix: backend.prefix,
    connectTimeoutMs: backend.connectTimeoutMs,
    onWaiting,
    pingIntervalMs: backend.pingIntervalMs,
    pingTimeoutMs: backend.pingTimeoutMs,
    commandTimeoutMs: backend.commandTimeoutMs,
    events,
  });
}

main().catch((error: unknown) => {
  if (error instanceof ConfigError || error instanceof TelemetrySettingsError) {
    console.error(error.message);
    process.exit(2);
  }
  console.error(redactedErrorReport(error));
  process.exit(1);
});
