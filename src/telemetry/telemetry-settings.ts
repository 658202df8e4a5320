/**
 * The OTLP encodings the server exports with: http/protobuf (the OTLP
 * default), http/json, and grpc (its exporters add little: grpc-js is the
 * server's own transport). The SDK's other exporters (console, Zipkin,
 * Prometheus) are not shipped.
 */
export const OTLP_PROTOCOLS = ['http/protobuf', 'http/json', 'grpc'] as const;
export type OtlpProtocol = (typeof OTLP_PROTOCOLS)[number];

/** What the standard OTEL_* variables ask the server to export, validated. */
export interface TelemetrySettings {
  /** The encoding spans are exported with; null: spans are not exported. */
  traces: OtlpProtocol | null;
  /** The encoding metrics are exported with; null: metrics are not exported. */
  metrics: OtlpProtocol | null;
  /** Time between two metric exports (OTEL_METRIC_EXPORT_INTERVAL). */
  metricExportIntervalMs: number;
  /** How long one metric export may take (OTEL_METRIC_EXPORT_TIMEOUT), at most the interval. */
  metricExportTimeoutMs: number;
}

/** OTEL_* settings the server cannot honour, every one of them at once; the server refuses to start. */
export class TelemetrySettingsError extends Error {
  constructor(readonly problems: string[]) {
    super(`invalid telemetry configuration:\n  - ${problems.join('\n  - ')}`);
    this.name = 'TelemetrySettingsError';
  }
}

type Signal = 'TRACES' | 'METRICS';

/** The specification's defaults (sdk-environment-variables): one minute between exports, 30 s for each. */
const DEFAULT_METRIC_EXPORT_INTERVAL_MS = 60_000;
const DEFAULT_METRIC_EXPORT_TIMEOUT_MS = 30_000;

/**
 * Reads the exporter choice from the environment as NodeSDK did: nothing is
 * exported (null) unless OTEL_TRACES_EXPORTER, OTEL_METRICS_EXPORTER or an
 * OTLP endpoint asks for it; once asked, each signal is exported with OTLP
 * unless its OTEL_<SIGNAL>_EXPORTER says `none`, over the protocol of
 * OTEL_EXPORTER_OTLP_<SIGNAL>_PROTOCOL, else OTEL_EXPORTER_OTLP_PROTOCOL,
 * else http/protobuf. Throws a TelemetrySettingsError for an exporter or
 * protocol the server does not ship, where NodeSDK only warned and exported
 * something else or nothing.
 */
export function telemetrySettings(env: NodeJS.ProcessEnv): TelemetrySettings | null {
  if (!wantsExporter(env, 'TRACES') && !wantsExporter(env, 'METRICS')) return null;
  const problems: string[] = [];
  const protocolFor = (signal: Signal): OtlpProtocol | null => {
    const exporter = exporterOf(env, signal, problems);
    return exporter === 'none' ? null : protocolOf(env, signal, problems);
  };
  const traces = protocolFor('TRACES');
  const metrics = protocolFor('METRICS');
  const metricExportIntervalMs = millisecondsOf(env, 'OTEL_METRIC_EXPORT_INTERVAL', DEFAULT_METRIC_EXPORT_INTERVAL_MS, problems);
  const metricExportTimeoutMs = millisecondsOf(env, 'OTEL_METRIC_EXPORT_TIMEOUT', DEFAULT_METRIC_EXPORT_TIMEOUT_MS, problems);
  if (problems.length > 0) throw new TelemetrySettingsError(problems);
  // The metric reader refuses a timeout longer than its interval; NodeSDK clamps it too.
  return { traces, metrics, metricExportIntervalMs, metricExportTimeoutMs: Math.min(metricExportTimeoutMs, metricExportIntervalMs) };
}

/** A variable's value, trimmed; an empty one counts as unset, as the specification says. */
function valueOf(env: NodeJS.ProcessEnv, name: string): string | undefined {
  const value = env[name]?.trim();
  return value === '' ? undefined : value;
}

/** Whether the environment asks for an exporter of this signal (an OTLP endpoint counts for both). */
function wantsExporter(env: NodeJS.ProcessEnv, signal: Signal): boolean {
  const exporter = valueOf(env, `OTEL_${signal}_EXPORTER`);
  if (exporter !== undefined) return exporter.toLowerCase() !== 'none';
  return valueOf(env, 'OTEL_EXPORTER_OTLP_ENDPOINT') !== undefined || valueOf(env, `OTEL_EXPORTER_OTLP_${signal}_ENDPOINT`) !== undefined;
}

/** OTEL_<SIGNAL>_EXPORTER: unset means otlp; otlp and none are all the server ships. */
function exporterOf(env: NodeJS.ProcessEnv, signal: Signal, problems: string[]): 'otlp' | 'none' {
  const name = `OTEL_${signal}_EXPORTER`;
  const value = valueOf(env, name);
  const exporters = [...new Set((value ?? 'otlp').split(',').map((exporter) => exporter.trim().toLowerCase()))];
  const [exporter] = exporters;
  if (exporters.length === 1 && (exporter === 'otlp' || exporter === 'none')) return exporter;
  problems.push(`${name}=${value}: this server exports ${signal.toLowerCase()} with "otlp" only, or "none" for no export`);
  return 'none';
}

function protocolOf(env: NodeJS.ProcessEnv, signal: Signal, problems: string[]): OtlpProtocol | null {
  const name =
    valueOf(env, `OTEL_EXPORTER_OTLP_${signal}_PROTOCOL`) === undefined
      ? 'OTEL_EXPORTER_OTLP_PROTOCOL'
      : `OTEL_EXPORTER_OTLP_${signal}_PROTOCOL`;
  const value = valueOf(env, name) ?? 'http/protobuf';
  const protocol = OTLP_PROTOCOLS.find((known) => known === value.toLowerCase());
  if (protocol !== undefined) return protocol;
  problems.push(`${name}=${value}: the OTLP protocols this server exports with are ${OTLP_PROTOCOLS.join(', ')}`);
  return null;
}

/** A positive whole number of milliseconds, or the default when unset. */
function millisecondsOf(env: NodeJS.ProcessEnv, name: string, defaultMs: number, problems: string[]): number {
  const value = valueOf(env, name);
  if (value === undefined) return defaultMs;
  const ms = Number(value);
  if (Number.isSafeInteger(ms) && ms > 0) return ms;
  problems.push(`${name}=${value}: expected a positive whole number of milliseconds`);
  return defaultMs;
}
