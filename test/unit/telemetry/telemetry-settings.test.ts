import { TelemetrySettingsError, telemetrySettings } from '../../../src/telemetry/telemetry-settings';

const ENDPOINT = { OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318' };
const DEFAULT_INTERVALS = { metricExportIntervalMs: 60_000, metricExportTimeoutMs: 30_000 };

/** The problems a TelemetrySettingsError lists for `env`; fails when the settings are accepted. */
function problemsOf(env: NodeJS.ProcessEnv): string[] {
  try {
    telemetrySettings(env);
  } catch (error) {
    if (error instanceof TelemetrySettingsError) return error.problems;
    throw error;
  }
  throw new Error(`accepted ${JSON.stringify(env)}`);
}

describe('telemetrySettings', () => {
  it.each([
    {},
    { OTEL_TRACES_EXPORTER: 'none' },
    { OTEL_TRACES_EXPORTER: 'none', OTEL_METRICS_EXPORTER: 'none' },
    { OTEL_TRACES_EXPORTER: '' },
  ])('exports nothing when nothing asks for an exporter: %j', (env) => {
    expect(telemetrySettings(env)).toBeNull();
  });

  it('exports both signals with http/protobuf, the OTLP default, once an endpoint is set', () => {
    expect(telemetrySettings(ENDPOINT)).toEqual({ traces: 'http/protobuf', metrics: 'http/protobuf', ...DEFAULT_INTERVALS });
  });

  it('exports both signals when only one exporter variable says otlp, as NodeSDK did', () => {
    expect(telemetrySettings({ OTEL_TRACES_EXPORTER: 'otlp' })).toMatchObject({ traces: 'http/protobuf', metrics: 'http/protobuf' });
  });

  it('leaves out the signal whose exporter is none', () => {
    expect(telemetrySettings({ ...ENDPOINT, OTEL_METRICS_EXPORTER: 'none' })).toMatchObject({ traces: 'http/protobuf', metrics: null });
    expect(telemetrySettings({ OTEL_EXPORTER_OTLP_METRICS_ENDPOINT: 'http://m', OTEL_TRACES_EXPORTER: 'none' })).toMatchObject({
      traces: null,
      metrics: 'http/protobuf',
    });
  });

  it("takes each signal's protocol from its own variable, then the general one", () => {
    const env = { ...ENDPOINT, OTEL_EXPORTER_OTLP_PROTOCOL: 'grpc', OTEL_EXPORTER_OTLP_TRACES_PROTOCOL: 'http/json' };
    expect(telemetrySettings(env)).toMatchObject({ traces: 'http/json', metrics: 'grpc' });
  });

  it('reads the metric export interval and timeout, keeping the timeout within the interval', () => {
    expect(telemetrySettings({ ...ENDPOINT, OTEL_METRIC_EXPORT_INTERVAL: '5000' })).toMatchObject({
      metricExportIntervalMs: 5_000,
      metricExportTimeoutMs: 5_000,
    });
    expect(telemetrySettings({ ...ENDPOINT, OTEL_METRIC_EXPORT_INTERVAL: '10000', OTEL_METRIC_EXPORT_TIMEOUT: '2000' })).toMatchObject({
      metricExportIntervalMs: 10_000,
      metricExportTimeoutMs: 2_000,
    });
  });

  it.each([
    ['console', 'OTEL_TRACES_EXPORTER=console: this server exports traces with "otlp" only, or "none" for no export'],
    ['zipkin', 'OTEL_TRACES_EXPORTER=zipkin: this server exports traces with "otlp" only, or "none" for no export'],
    ['otlp,zipkin', 'OTEL_TRACES_EXPORTER=otlp,zipkin: this server exports traces with "otlp" only, or "none" for no export'],
  ])('refuses OTEL_TRACES_EXPORTER=%s, naming what it supports', (exporter, problem) => {
    expect(problemsOf({ OTEL_TRACES_EXPORTER: exporter })).toEqual([problem]);
  });

  it('lists every problem at once', () => {
    const env = {
      OTEL_METRICS_EXPORTER: 'prometheus',
      OTEL_EXPORTER_OTLP_TRACES_PROTOCOL: 'http/thrift',
      OTEL_METRIC_EXPORT_INTERVAL: '0',
      OTEL_METRIC_EXPORT_TIMEOUT: '1.5s',
    };
    expect(problemsOf(env)).toEqual([
      'OTEL_EXPORTER_OTLP_TRACES_PROTOCOL=http/thrift: the OTLP protocols this server exports with are http/protobuf, http/json, grpc',
      'OTEL_METRICS_EXPORTER=prometheus: this server exports metrics with "otlp" only, or "none" for no export',
      'OTEL_METRIC_EXPORT_INTERVAL=0: expected a positive whole number of milliseconds',
      'OTEL_METRIC_EXPORT_TIMEOUT=1.5s: expected a positive whole number of milliseconds',
    ]);
  });
});
