import { metrics, trace, type Meter, type Tracer } from '@opentelemetry/api';
import { defaultResource, detectResources, resourceFromAttributes, type Resource } from '@opentelemetry/resources';
import { MeterProvider, PeriodicExportingMetricReader } from '@opentelemetry/sdk-metrics';
import { BatchSpanProcessor, NodeTracerProvider } from '@opentelemetry/sdk-trace-node';
import { otlpMetricExporter, otlpSpanExporter } from './otlp-exporters';
import { RESOURCE_DETECTORS } from './resource-detectors';
import { telemetrySettings, type OtlpProtocol } from './telemetry-settings';

export interface TelemetrySdk {
  tracer: Tracer;
  meter: Meter;
  /** Whether traces or metrics are exported: without, the tracer and meter are no-ops. */
  isExporting: boolean;
  /** Flushes and stops exporting. */
  shutdown(): Promise<void>;
}

const INSTRUMENTATION_NAME = 'ojs-grpc-server';

/**
 * Starts exporting traces and metrics over OTLP when the environment asks for
 * it (OTEL_TRACES_EXPORTER, OTEL_METRICS_EXPORTER, or an OTLP endpoint; see
 * telemetrySettings, which throws a TelemetrySettingsError for what the
 * server cannot do). With none of them set nothing is started and spans and
 * metrics cost next to nothing.
 *
 * The SDK is assembled from its parts rather than NodeSDK, which loads every
 * exporter it knows (OTLP for logs too, Zipkin, Prometheus): about half of
 * the production dependencies. The parts read the other standard variables
 * themselves: the sampler (OTEL_TRACES_SAMPLER, OTEL_TRACES_SAMPLER_ARG;
 * parent-based always-on by default), span limits, OTEL_BSP_*, and the
 * exporters' endpoints, headers and timeouts.
 */
export function startTelemetry(env: NodeJS.ProcessEnv): TelemetrySdk {
  const settings = telemetrySettings(env);
  const providers: { shutdown(): Promise<void> }[] = [];
  if (settings !== null) {
    const resource = serverResource(env);
    if (settings.traces !== null) providers.push(startTracing(resource, settings.traces));
    if (settings.metrics !== null) {
      const exporter = otlpMetricExporter(settings.metrics);
      const reader = new PeriodicExportingMetricReader({
        exporter,
        exportIntervalMillis: settings.metricExportIntervalMs,
        exportTimeoutMillis: settings.metricExportTimeoutMs,
      });
      const meterProvider = new MeterProvider({ resource, readers: [reader] });
      metrics.setGlobalMeterProvider(meterProvider);
      providers.push(meterProvider);
    }
  }
  return {
    tracer: trace.getTracer(INSTRUMENTATION_NAME),
    meter: metrics.getMeter(INSTRUMENTATION_NAME),
    isExporting: providers.length > 0,
    shutdown: async () => {
      await Promise.all(providers.map((provider) => provider.shutdown()));
    },
  };
}

/**
 * A global tracer provider exporting in batches, with the AsyncLocalStorage
 * context manager and the W3C trace-context and baggage propagators that
 * NodeSDK registered too.
 */
function startTracing(resource: Resource, protocol: OtlpProtocol): NodeTracerProvider {
  const provider = new NodeTracerProvider({ resource, spanProcessors: [new BatchSpanProcessor(otlpSpanExporter(protocol))] });
  provider.register();
  return provider;
}

/**
 * The SDK's default resource, then what the detectors find (OTEL_RESOURCE_ATTRIBUTES
 * among them; never the command line, it carries secrets), then the service
 * name: OTEL_SERVICE_NAME, else the server's own, as NodeSDK was told.
 */
function serverResource(env: NodeJS.ProcessEnv): Resource {
  return defaultResource()
    .merge(detectResources({ detectors: [...RESOURCE_DETECTORS] }))
    .merge(resourceFromAttributes({ 'service.name': env['OTEL_SERVICE_NAME'] || INSTRUMENTATION_NAME }));
}
