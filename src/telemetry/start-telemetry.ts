import { metrics, trace, type Meter, type Tracer } from '@opentelemetry/api';
import { NodeSDK } from '@opentelemetry/sdk-node';
import { RESOURCE_DETECTORS } from './resource-detectors';

export interface TelemetrySdk {
  tracer: Tracer;
  meter: Meter;
  /** Flushes and stops exporting. */
  shutdown(): Promise<void>;
}

const INSTRUMENTATION_NAME = 'ojs-grpc-server';

/** Whether the environment asks for an exporter of this signal (an OTLP endpoint counts for both). */
function wantsExporter(env: NodeJS.ProcessEnv, signal: 'TRACES' | 'METRICS'): boolean {
  const exporter = env[`OTEL_${signal}_EXPORTER`];
  if (exporter !== undefined) return exporter !== 'none';
  return env['OTEL_EXPORTER_OTLP_ENDPOINT'] !== undefined || env[`OTEL_EXPORTER_OTLP_${signal}_ENDPOINT`] !== undefined;
}

/**
 * Starts the OpenTelemetry SDK when the environment asks for an exporter of
 * traces or metrics (OTEL_TRACES_EXPORTER, OTEL_METRICS_EXPORTER, or an OTLP
 * endpoint); the SDK then reads every standard OTEL_* variable itself. With
 * none of them set nothing is started and spans and metrics cost next to
 * nothing.
 */
export function startTelemetry(env: NodeJS.ProcessEnv): TelemetrySdk {
  const handles = (): Pick<TelemetrySdk, 'tracer' | 'meter'> => ({
    tracer: trace.getTracer(INSTRUMENTATION_NAME),
    meter: metrics.getMeter(INSTRUMENTATION_NAME),
  });
  if (!wantsExporter(env, 'TRACES') && !wantsExporter(env, 'METRICS')) return { ...handles(), shutdown: async () => {} };
  const sdk = new NodeSDK({
    serviceName: env['OTEL_SERVICE_NAME'] ?? INSTRUMENTATION_NAME,
    // Never the command line: it carries secrets.
    resourceDetectors: [...RESOURCE_DETECTORS],
  });
  sdk.start();
  return { ...handles(), shutdown: () => sdk.shutdown() };
}
