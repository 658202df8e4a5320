import { trace, type Tracer } from '@opentelemetry/api';
import { NodeSDK } from '@opentelemetry/sdk-node';

export interface Telemetry {
  tracer: Tracer;
  /** Flushes and stops exporting. */
  shutdown(): Promise<void>;
}

const TRACER_NAME = 'ojs-grpc-server';

/**
 * Starts the OpenTelemetry SDK when the environment asks for an exporter
 * (OTEL_TRACES_EXPORTER, or an OTLP endpoint); the SDK then reads every
 * standard OTEL_* variable itself. With none of them set nothing is started
 * and spans cost next to nothing.
 */
export function startTelemetry(env: NodeJS.ProcessEnv): Telemetry {
  const wantsExport =
    (env['OTEL_TRACES_EXPORTER'] !== undefined && env['OTEL_TRACES_EXPORTER'] !== 'none') ||
    env['OTEL_EXPORTER_OTLP_ENDPOINT'] !== undefined ||
    env['OTEL_EXPORTER_OTLP_TRACES_ENDPOINT'] !== undefined;
  if (!wantsExport) return { tracer: trace.getTracer(TRACER_NAME), shutdown: async () => {} };
  const sdk = new NodeSDK({ serviceName: env['OTEL_SERVICE_NAME'] ?? TRACER_NAME });
  sdk.start();
  return { tracer: trace.getTracer(TRACER_NAME), shutdown: () => sdk.shutdown() };
}
